import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** An accepted event, written by the fan-out together with its recipients (its messages). */
@Entity('events')
@Index('idx_events_organization', ['organizationId', 'id'])
@Index('idx_events_application', ['organizationId', 'applicationId', 'id'], {
  where: 'application_id IS NOT NULL',
})
export class EventEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'event_type', type: 'text' }) eventType!: string;
  /** The application whose endpoints the event was for; null for endpoints of none. */
  @Column({ name: 'application_id', type: 'text', nullable: true }) applicationId!: string | null;
  /** As published (`json`): its keys in the producer's order. */
  @Column({ type: 'json' }) payload!: Record<string, unknown>;
  /** The channels it was published on (empty: none). */
  @Column({ type: 'jsonb', default: () => `'[]'` }) channels!: string[];
  @Column({ name: 'idempotency_key', type: 'text', nullable: true }) idempotencyKey!: string | null;
  @Column({ name: 'accepted_at', type: 'timestamptz' }) acceptedAt!: Date;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  /** W3C `traceparent` of the event's fan-out; null when tracing was off. */
  /** When its payload was erased on request; null: never. */
  @Column({ name: 'payload_purged_at', type: 'timestamptz', nullable: true })
  payloadPurgedAt!: Date | null;
  @Column({ name: 'trace_parent', type: 'text', nullable: true }) traceParent!: string | null;
}
