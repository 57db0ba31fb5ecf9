import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An idempotency key reserved by ingest before the event goes to Kafka. `acceptedAt` is set once
 * Kafka acknowledged; a reservation without it is an interrupted publish that a repeat completes.
 */
@Entity('idempotency_keys')
export class IdempotencyKeyEntity {
  @PrimaryColumn({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @PrimaryColumn({ name: 'idempotency_key', type: 'text' }) idempotencyKey!: string;
  @Column({ name: 'event_id', type: 'text' }) eventId!: string;
  @Column({ name: 'event_type', type: 'text' }) eventType!: string;
  @Column('text') fingerprint!: string;
  @Column({ type: 'jsonb' }) payload!: Record<string, unknown>;
  @Column({ name: 'endpoint_ids', type: 'text', array: true, nullable: true })
  endpointIds!: string[] | null;
  @Column({ type: 'text', array: true, nullable: true }) channels!: string[] | null;
  @Column({ name: 'application_id', type: 'text', nullable: true }) applicationId!: string | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'accepted_at', type: 'timestamptz', nullable: true }) acceptedAt!: Date | null;
}
