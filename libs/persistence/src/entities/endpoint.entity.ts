import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { EndpointKind, EndpointStatus, RetryPolicy } from '@hookbase/domain';

@Entity('endpoints')
@Index('idx_endpoints_organization', ['organizationId', 'id'])
export class EndpointEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  /** The application the endpoint belongs to, for good; null for the organization's own. */
  @Column({ name: 'application_id', type: 'text', nullable: true }) applicationId!: string | null;
  @Column('text') kind!: EndpointKind;
  @Column({ type: 'text', nullable: true }) url!: string | null;
  @Column({ type: 'text', nullable: true }) description!: string | null;
  @Column({ type: 'jsonb', default: () => `'{}'` }) config!: Record<string, unknown>;
  @Column({ name: 'event_types', type: 'text', array: true, default: () => `'{}'` })
  eventTypes!: string[];
  @Column('text') status!: EndpointStatus;
  @Column({ name: 'fifo_enabled', type: 'boolean', default: false }) fifoEnabled!: boolean;
  @Column({ type: 'jsonb' }) retry!: RetryPolicy;
  @Column({ name: 'rate_limit_per_second', type: 'integer', nullable: true })
  rateLimitPerSecond!: number | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}
