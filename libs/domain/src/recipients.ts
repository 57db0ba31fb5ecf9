import { newId } from './ids';
import { operationalRouteAllows } from './operational-events';
import type { EndpointKind, EndpointStatus } from './model';
import { DEFAULT_RETRY_POLICY, maxAttempts, RetryPolicy } from './retry-policy';

/** What recipient resolution needs to know of an endpoint. */
export interface RecipientCandidate {
  id: string;
  status: EndpointStatus;
  eventTypes: readonly string[];
  deleted: boolean;
  /** Receives only operational events addressed to it (operational-events.ts). */
  operational?: boolean;
}

/**
 * The endpoints that receive an event, resolved once per event: subscribed to its type (an empty
 * list means every type), paused ones included (they hold the message), disabled and deleted
 * ones not. `endpointIds`, when given, narrows the set to those endpoints.
 */
export function matchRecipients<T extends RecipientCandidate>(
  candidates: readonly T[],
  event: { eventType: string; endpointIds?: readonly string[]; operational?: boolean },
): T[] {
  const only = event.endpointIds ? new Set(event.endpointIds) : undefined;
  return candidates.filter(
    (endpoint) =>
      !endpoint.deleted &&
      endpoint.status !== 'disabled' &&
      (only === undefined || only.has(endpoint.id)) &&
      operationalRouteAllows(endpoint, event) &&
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
  /** The endpoint's retry setting; null for the default schedule. */
  retry: RetryPolicy | null;
  /** An operational endpoint (absent: false). */
  operational?: boolean;
}

/** The event fields that decide its recipients and its messages. */
export interface EventToFanOut {
  id: string;
  organizationId: string;
  eventType: string;
  endpointIds?: readonly string[];
  /** Written by Hookbase as an operational event (the record's origin), never by a producer. */
  operational?: boolean;
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
      operational: endpoint.operational ?? false,
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
