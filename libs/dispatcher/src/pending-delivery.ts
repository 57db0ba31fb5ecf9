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
  payload: Record<string, unknown>;
  acceptedAt: Date;
  attemptsMade: number;
  /** W3C `traceparent` of the event's fan-out: each attempt's span is its child. */
  traceParent?: string | null;
}
