import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A record on the events topic that could not be accepted, and why (see `<prefix>.events.invalid`). */
@Entity('invalid_events')
@Index('uq_invalid_events_position', ['topic', 'partition', 'offset'], { unique: true })
export class InvalidEventEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text') topic!: string;
  @Column('integer') partition!: number;
  @Column('bigint') offset!: string;
  @Column({ name: 'record_key', type: 'text', nullable: true }) recordKey!: string | null;
  @Column({ name: 'value_excerpt', type: 'text', nullable: true }) valueExcerpt!: string | null;
  @Column('text') reason!: string;
  @Column({ name: 'received_at', type: 'timestamptz' }) receivedAt!: Date;
}
