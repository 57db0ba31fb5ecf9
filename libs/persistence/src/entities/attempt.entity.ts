import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** One try at delivering a message: what was sent when, and what came back. */
@Entity('attempts')
@Index('idx_attempts_message', ['messageId', 'attemptNumber'])
export class AttemptEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'message_id', type: 'text' }) messageId!: string;
  @Column({ name: 'attempt_number', type: 'integer' }) attemptNumber!: number;
  @Column({ name: 'started_at', type: 'timestamptz' }) startedAt!: Date;
  @Column({ name: 'duration_ms', type: 'integer' }) durationMs!: number;
  @Column({ type: 'text' }) outcome!: 'succeeded' | 'retry' | 'failed';
  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus!: number | null;
  @Column({ name: 'response_excerpt', type: 'text', nullable: true })
  responseExcerpt!: string | null;
  @Column({ type: 'text', nullable: true }) error!: string | null;
}
