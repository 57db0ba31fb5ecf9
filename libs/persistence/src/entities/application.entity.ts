import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A producer's customer inside an organization: its endpoints receive only its events. */
@Entity('applications')
export class ApplicationEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  /** The producer's own id for its customer, unique in the organization; null if none given. */
  @Column({ type: 'text', nullable: true }) uid!: string | null;
  @Column('text') name!: string;
  @Column({ type: 'jsonb', default: () => `'{}'` }) metadata!: Record<string, unknown>;
  /** Days its log is kept, at most the plan's; null: the plan's. */
  @Column({ name: 'retention_days', type: 'double precision', nullable: true })
  retentionDays!: number | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
