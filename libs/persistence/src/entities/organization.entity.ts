import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { HostIdentityGrant, Plan, PortalSettings } from '@hookbase/domain';

@Entity('organizations')
export class OrganizationEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text') name!: string;
  @Column('text') plan!: Plan;
  /** The opt-in to the host's cloud identity; null is off (see host-identity.ts). */
  @Column({ name: 'host_cloud_identity', type: 'jsonb', nullable: true })
  hostCloudIdentity!: HostIdentityGrant | null;
  /** Portal branding and the origins allowed to embed the portal; null for none. */
  @Column({ type: 'jsonb', nullable: true }) portal!: PortalSettings | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
