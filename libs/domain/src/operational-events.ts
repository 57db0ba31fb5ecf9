/**
 * Operational webhooks: events about an organization's own endpoints (created, disabled, failing,
 * recovered...) that Hookbase sends to the organization's operational endpoints through its own
 * pipeline (retries, DLQ, the message log). They are ordinary events addressed by `endpointIds`
 * to operational endpoints only; an operational endpoint receives nothing else, and what happens
 * to an operational delivery never causes another operational event (no loops).
 */

export const OPERATIONAL_EVENT_TYPES = [
  'endpoint.created',
  'endpoint.updated',
  'endpoint.deleted',
  'endpoint.disabled',
  'endpoint.enabled',
  'message.attempt.failing',
  'message.attempt.exhausted',
  'message.attempt.recovered',
  'fifo.queue.blocked',
  'fifo.queue.unblocked',
] as const;
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

export function isOperationalEventType(type: string): type is OperationalEventType {
  return (OPERATIONAL_EVENT_TYPES as readonly string[]).includes(type);
}

/** An operational endpoint as the publisher sees it. */
export interface OperationalEndpoint {
  id: string;
  status: string;
  eventTypes: readonly string[];
}

/** The operational endpoints that receive an event of this type: live, subscribed to it. */
export function operationalRecipients(
  endpoints: readonly OperationalEndpoint[],
  type: OperationalEventType,
): string[] {
  return endpoints
    .filter(
      (endpoint) =>
        endpoint.status !== 'disabled' &&
        (endpoint.eventTypes.length === 0 || endpoint.eventTypes.includes(type)),
    )
    .map((endpoint) => endpoint.id);
}

/**
 * Whether an endpoint may receive an event, as far as operational routing goes: an operational
 * endpoint only operational events that Hookbase wrote (`operational`, from the record's origin)
 * addressed to it; any other endpoint anything (its own filters still apply).
 */
export function operationalRouteAllows(
  endpoint: { id: string; operational?: boolean },
  event: { eventType: string; endpointIds?: readonly string[]; operational?: boolean },
): boolean {
  if (!endpoint.operational) return true;
  return (
    event.operational === true &&
    isOperationalEventType(event.eventType) &&
    (event.endpointIds?.includes(endpoint.id) ?? false)
  );
}

/** The payload of an operational event: what happened, to which endpoint, when. */
export function operationalPayload(
  type: OperationalEventType,
  endpointId: string,
  at: Date,
  data: Record<string, unknown> = {},
): Record<string, unknown> {
  return { type, timestamp: at.toISOString(), data: { endpointId, ...data } };
}
