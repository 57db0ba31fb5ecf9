import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { DeliveryRoute, MessageStatus } from '@hookbase/domain';

/** One event for one endpoint: the unit that is delivered, retried and dead-lettered. */
@Entity('messages')
@Index('uq_messages_event_endpoint', ['eventId', 'endpointId'], {
  unique: true,
  where: 'replay_of IS NULL',
})
@Index('idx_messages_organization', ['organizationId', 'id'])
@Index('idx_messages_endpoint', ['endpointId', 'id'])
export class MessageEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'event_id', type: 'text' }) eventId!: string;
  @Column({ name: 'endpoint_id', type: 'text' }) endpointId!: string;
  @Column({ name: 'event_type', type: 'text' }) eventType!: string;
  @Column('text') status!: MessageStatus;
  /** What owns it now (ADR 0019); changes with its status, as `delivery-state.ts` allows. */
  @Column('text') route!: DeliveryRoute;
  @Column({ type: 'integer', default: 0 }) attempts!: number;
  @Column({ name: 'max_attempts', type: 'integer' }) maxAttempts!: number;
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;
  /** While the retry scheduler's claim on it holds: the claim's lease end. */
  @Column({ name: 'claim_until', type: 'timestamptz', nullable: true }) claimUntil!: Date | null;
  @Column({ name: 'last_response_status', type: 'integer', nullable: true })
  lastResponseStatus!: number | null;
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError!: string | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true }) finishedAt!: Date | null;
  /** Set on a copy made by a replay or DLQ retry: the message it copies (and whose webhook-id it keeps). */
  @Column({ name: 'replay_of', type: 'text', nullable: true }) replayOf!: string | null;
  /** Its place in its endpoint's FIFO lane while queued there; null outside a lane. */
  @Column({ name: 'fifo_seq', type: 'bigint', nullable: true }) fifoSeq!: string | null;
  /** Its place in its polling endpoint's poll log (ADR 0011); null for push kinds. */
  @Column({ name: 'poll_seq', type: 'bigint', nullable: true }) pollSeq!: string | null;
}
