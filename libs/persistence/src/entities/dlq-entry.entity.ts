import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { DlqReason } from '@hookbase/domain';

@Entity('dlq_entries')
@Index('uq_dlq_entries_message', ['messageId'], { unique: true })
@Index('idx_dlq_entries_organization', ['organizationId', 'id'])
export class DlqEntryEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'message_id', type: 'text' }) messageId!: string;
  @Column({ name: 'endpoint_id', type: 'text' }) endpointId!: string;
  @Column({ name: 'event_id', type: 'text' }) eventId!: string;
  @Column({ name: 'event_type', type: 'text' }) eventType!: string;
  @Column('text') reason!: DlqReason;
  @Column({ type: 'integer' }) attempts!: number;
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError!: string | null;
  @Column({ name: 'last_response_status', type: 'integer', nullable: true })
  lastResponseStatus!: number | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'retried_at', type: 'timestamptz', nullable: true }) retriedAt!: Date | null;
  @Column({ name: 'retry_message_id', type: 'text', nullable: true }) retryMessageId!:
    string | null;
}
