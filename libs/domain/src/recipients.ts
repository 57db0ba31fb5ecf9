import type { EndpointStatus } from './model';

/** What recipient resolution needs to know of an endpoint. */
export interface RecipientCandidate {
  id: string;
  status: EndpointStatus;
  eventTypes: readonly string[];
  deleted: boolean;
}

/**
 * The endpoints that receive an event, resolved once per event: subscribed to its type (an empty
 * list means every type), paused ones included (they hold the message), disabled and deleted
 * ones not. `endpointIds`, when given, narrows the set to those endpoints.
 */
export function matchRecipients<T extends RecipientCandidate>(
  candidates: readonly T[],
  event: { eventType: string; endpointIds?: readonly string[] },
): T[] {
  const only = event.endpointIds ? new Set(event.endpointIds) : undefined;
  return candidates.filter(
    (endpoint) =>
      !endpoint.deleted &&
      endpoint.status !== 'disabled' &&
      (only === undefined || only.has(endpoint.id)) &&
      (endpoint.eventTypes.length === 0 || endpoint.eventTypes.includes(event.eventType)),
  );
}
