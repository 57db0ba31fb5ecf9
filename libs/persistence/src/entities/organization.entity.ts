import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EventTypePolicy, HostIdentityGrant, Plan, PortalSettings } from '@hookbase/domain';

@Entity('organizations')
export class OrganizationEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text') name!: string;
  @Column('text') plan!: Plan;
  /** The opt-in to the host's cloud identity; null is off (see host-identity.ts). */
  @Column({ name: 'host_cloud_identity', type: 'jsonb', nullable: true })
  hostCloudIdentity!: HostIdentityGrant | null;
  /** How long an endpoint may fail without a success before it is disabled; null: the default. */
  @Column({
    name: 'auto_disable_after_ms',
    type: 'bigint',
    nullable: true,
    transformer: {
      to: (value: number | null) => value,
      from: (value: string | null) => (value === null ? null : Number(value)),
    },
  })
  autoDisableAfterMs!: number | null;
  /** What a publish must satisfy against the event type catalog (see event-types.ts). */
  @Column({ name: 'event_type_policy', type: 'text', default: 'open' })
  eventTypePolicy!: EventTypePolicy;
  /** Portal branding and the origins allowed to embed the portal; null for none. */
  @Column({ type: 'jsonb', nullable: true }) portal!: PortalSettings | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
