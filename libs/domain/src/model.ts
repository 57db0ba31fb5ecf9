/** The nouns of Hookbase and the records that travel between services. */

export const PLANS = ['free', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];

export const ENDPOINT_KINDS = [
  'http',
  'sqs',
  'sns',
  'eventbridge',
  'pubsub',
  's3',
  'polling',
] as const;
export type EndpointKind = (typeof ENDPOINT_KINDS)[number];

export const ENDPOINT_STATUSES = ['active', 'paused', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

export const MESSAGE_STATUSES = [
  'pending',
  'fifo_waiting',
  'in_flight',
  'awaiting_retry',
  'succeeded',
  'failed',
  'cancelled',
  'skipped',
  'expired',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const DLQ_REASONS = [
  'max_attempts',
  'max_age',
  'permanent_failure',
  'endpoint_deleted',
  'circuit_open',
  'fifo_expired',
  'payload_purged',
] as const;
export type DlqReason = (typeof DLQ_REASONS)[number];

/** Value of a record on `<prefix>.events`, keyed by organization id. */
export interface EventEnvelope {
  id: string;
  organizationId: string;
  eventType: string;
  payload: Record<string, unknown>;
  acceptedAt: string;
  idempotencyKey?: string;
  endpointIds?: string[];
  /** Channels the event was published on (see recipients.ts). */
  channels?: string[];
  /**
   * The application whose endpoints receive the event. Ingest writes its id; a direct producer
   * may write its id or uid, and the fan-out resolves it (an unknown one is quarantined).
   */
  applicationId?: string;
}

/** Value of a record on `<prefix>.deliveries`, keyed by endpoint id: one message for one endpoint. */
export interface DeliveryRecord {
  messageId: string;
  eventId: string;
  organizationId: string;
  endpointId: string;
  eventType: string;
  /**
   * The event's payload; absent when it was too large to go with each of the event's records
   * (HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES): the dispatcher reads it from the event.
   */
  payload?: Record<string, unknown>;
  acceptedAt: string;
}

/** Value of a record on `<prefix>.dlq`, keyed by endpoint id. */
export interface DlqRecord {
  messageId: string;
  organizationId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  reason: DlqReason;
  attempts: number;
  lastError: string | null;
  lastResponseStatus: number | null;
  deadLetteredAt: string;
}
