import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type {
  DisabledReason,
  EndpointKind,
  EndpointStatus,
  RetryPolicy,
  StoredReceiverOptions,
} from '@hookbase/domain';

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
  /** Channels the endpoint listens on; empty for every channel (see recipients.ts). */
  @Column({ type: 'text', array: true, default: () => `'{}'` }) channels!: string[];
  /** A content filter (event-filter.ts), checked when saved; null for none. */
  @Column({ type: 'jsonb', nullable: true }) filter!: Record<string, unknown> | null;
  @Column('text') status!: EndpointStatus;
  @Column({ name: 'fifo_enabled', type: 'boolean', default: false }) fifoEnabled!: boolean;
  @Column({ type: 'jsonb' }) retry!: RetryPolicy;
  @Column({ name: 'rate_limit_per_second', type: 'integer', nullable: true })
  rateLimitPerSecond!: number | null;
  /** http only: headers, sealed auth, timeout, trusted CA; null when none is set. */
  @Column({ name: 'delivery_options', type: 'jsonb', nullable: true })
  deliveryOptions!: StoredReceiverOptions | null;
  /** The failure streak: failed attempts in a row, and when the streak began (null: none). */
  @Column({ name: 'consecutive_failures', type: 'integer', default: 0 })
  consecutiveFailures!: number;
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince!: Date | null;
  /** The last successful attempt (written at most once a minute while all goes well). */
  @Column({ name: 'last_success_at', type: 'timestamptz', nullable: true })
  lastSuccessAt!: Date | null;
  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason!: DisabledReason | null;
  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true }) disabledAt!: Date | null;
  /** Receives operational events only (operational-events.ts); managed under its own route. */
  @Column({ type: 'boolean', default: false }) operational!: boolean;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}
