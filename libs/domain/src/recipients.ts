import { inApplicationScope } from './applications';
import { newId } from './ids';
import type { EndpointKind, EndpointStatus } from './model';
import { DEFAULT_RETRY_POLICY, maxAttempts, RetryPolicy } from './retry-policy';

/** What recipient resolution needs to know of an endpoint. */
export interface RecipientCandidate {
  id: string;
  status: EndpointStatus;
  eventTypes: readonly string[];
  deleted: boolean;
  /** The application the endpoint belongs to; null (or absent) for the organization's own. */
  applicationId?: string | null;
}

/**
 * The endpoints that receive an event, resolved once per event: subscribed to its type (an empty
 * list means every type), paused ones included (they hold the message), disabled and deleted
 * ones not; only those in the event's application scope (inApplicationScope: the event's
 * application's endpoints, or for an event of no application the endpoints of none).
 * `endpointIds`, when given, narrows the set to those endpoints.
 */
export function matchRecipients<T extends RecipientCandidate>(
  candidates: readonly T[],
  event: { eventType: string; endpointIds?: readonly string[]; applicationId?: string | null },
): T[] {
  const only = event.endpointIds ? new Set(event.endpointIds) : undefined;
  return candidates.filter(
    (endpoint) =>
      !endpoint.deleted &&
      inApplicationScope(endpoint.applicationId, event.applicationId) &&
      endpoint.status !== 'disabled' &&
      (only === undefined || only.has(endpoint.id)) &&
      (endpoint.eventTypes.length === 0 || endpoint.eventTypes.includes(event.eventType)),
  );
}

/** An endpoint as the fan-out reads it to resolve recipients (live ones only). */
export interface RecipientEndpoint {
  id: string;
  organizationId: string;
  kind: EndpointKind;
  status: EndpointStatus;
  eventTypes: readonly string[];
  /** The application the endpoint belongs to; null for the organization's own. */
  applicationId: string | null;
  /** The endpoint's retry setting; null for the default schedule. */
  retry: RetryPolicy | null;
}

/** The event fields that decide its recipients and its messages. */
export interface EventToFanOut {
  id: string;
  organizationId: string;
  eventType: string;
  endpointIds?: readonly string[];
  /** The application (its id) whose endpoints receive the event; absent: endpoints of none. */
  applicationId?: string;
}

/** One message to record: an event for one recipient endpoint. */
export interface PlannedMessage {
  messageId: string;
  eventId: string;
  organizationId: string;
  endpointId: string;
  eventType: string;
  /** Attempts the endpoint's retry setting allows. */
  maxAttempts: number;
  /** Goes to a polling endpoint's log: consumers fetch it, nothing is sent. */
  polled: boolean;
}

/**
 * The messages of events: one per recipient of each event (matchRecipients among the live
 * endpoints of its organization), in event order, then in the order the endpoints are given. An
 * event given twice (a repeated publish) gets its messages once.
 */
export function planMessages(
  events: readonly EventToFanOut[],
  endpoints: readonly RecipientEndpoint[],
  newMessageId: () => string = () => newId('msg'),
): PlannedMessage[] {
  const byOrganization = new Map<
    string,
    (RecipientCandidate & { endpoint: RecipientEndpoint })[]
  >();
  for (const endpoint of endpoints) {
    const candidates = byOrganization.get(endpoint.organizationId) ?? [];
    candidates.push({
      id: endpoint.id,
      status: endpoint.status,
      eventTypes: endpoint.eventTypes,
      deleted: false,
      applicationId: endpoint.applicationId,
      endpoint,
    });
    byOrganization.set(endpoint.organizationId, candidates);
  }
  const planned = new Set<string>();
  return events.flatMap((event) => {
    if (planned.has(event.id)) return [];
    planned.add(event.id);
    return matchRecipients(byOrganization.get(event.organizationId) ?? [], event).map(
      ({ endpoint }): PlannedMessage => ({
        messageId: newMessageId(),
        eventId: event.id,
        organizationId: event.organizationId,
        endpointId: endpoint.id,
        eventType: event.eventType,
        maxAttempts: maxAttempts(endpoint.retry ?? DEFAULT_RETRY_POLICY),
        polled: endpoint.kind === 'polling',
      }),
    );
  });
}
