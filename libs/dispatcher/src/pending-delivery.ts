/** A message ready for its next attempt, from the deliveries topic or the retry schedule. */
export interface PendingDelivery {
  messageId: string;
  webhookId: string;
  /** `new`: first seen on the deliveries topic; `scheduled`: a retry, hold or replay copy. */
  source: 'new' | 'scheduled';
  eventId: string;
  organizationId: string;
  endpointId: string;
  eventType: string;
  /**
   * The event's payload as published. Absent for a message read from the deliveries topic whose
   * payload did not fit the read-ahead's budget: it is read from the event when the attempt is
   * about to start.
   */
  payload?: Record<string, unknown>;
  acceptedAt: Date;
  attemptsMade: number;
  /** W3C `traceparent` of the event's fan-out: each attempt's span is its child. */
  traceParent?: string | null;
}

/** A message with its payload: what an attempt sends. */
export type ReadyDelivery = PendingDelivery & { payload: Record<string, unknown> };
