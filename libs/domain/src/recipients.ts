import { compileFilter, EventPredicate } from './event-filter';
import { inApplicationScope } from './applications';
import { newId } from './ids';
import { operationalRouteAllows } from './operational-events';
import type { EndpointKind, EndpointStatus } from './model';
import { DEFAULT_RETRY_POLICY, maxAttempts, RetryPolicy } from './retry-policy';

/**
 * An endpoint's subscription to event types: a type's name, or a prefix ending in `*` right after
 * a separator (`order.*`, `billing/*`, `crm:*`), or `*` alone, which matches every type.
 */
export const EVENT_TYPE_SUBSCRIPTION_PATTERN =
  /^(?:\*|[A-Za-z0-9][A-Za-z0-9_.:\-/]*(?:[.:/-]\*)?)$/;

/**
 * Whether a subscription (`order.created`, `order.*`, `*`) covers an event type. A wildcard
 * covers every type that starts with its prefix and goes on past it: `order.*` covers
 * `order.created` and `order.item.added`, not `order` nor `orders.created`.
 */
export function eventTypeMatches(subscription: string, eventType: string): boolean {
  if (!subscription.endsWith('*')) return subscription === eventType;
  const prefix = subscription.slice(0, -1);
  return eventType.length > prefix.length && eventType.startsWith(prefix);
}

/** What the routing rule reads of an endpoint. */
export interface RoutingRule {
  /** Subscriptions; empty means every type. */
  eventTypes: readonly string[];
  /** Empty means every channel, and events on none. */
  channels: readonly string[];
  /** The endpoint's compiled filter; null when it has none. */
  filter: EventPredicate | null;
}

/** What the routing rule reads of an event. */
export interface RoutedEvent {
  eventType: string;
  channels: readonly string[];
  payload: unknown;
}

/**
 * The routing rule: an endpoint receives an event when one of its subscriptions covers the event's
 * type (or it has none), it shares a channel with the event (or it has none), and its filter holds
 * for the event (or it has none). Status, deletion and a publish's `endpointIds` are decided
 * around it (matchRecipients).
 */
export function endpointReceives(endpoint: RoutingRule, event: RoutedEvent): boolean {
  return (
    (endpoint.eventTypes.length === 0 ||
      endpoint.eventTypes.some((subscription) =>
        eventTypeMatches(subscription, event.eventType),
      )) &&
    (endpoint.channels.length === 0 ||
      endpoint.channels.some((channel) => event.channels.includes(channel))) &&
    (endpoint.filter === null || endpoint.filter(event))
  );
}

/** What recipient resolution needs to know of an endpoint. */
export interface RecipientCandidate {
  id: string;
  status: EndpointStatus;
  eventTypes: readonly string[];
  channels?: readonly string[];
  filter?: EventPredicate | null;
  deleted: boolean;
  /** Receives only operational events addressed to it (operational-events.ts). */
  operational?: boolean;
  /** The application the endpoint belongs to; null (or absent) for the organization's own. */
  applicationId?: string | null;
}

/**
 * The endpoints that receive an event, resolved once per event: those in the event's application
 * scope (inApplicationScope: the event's application's endpoints, or for an event of no
 * application the endpoints of none) that the routing rule admits (endpointReceives), paused ones
 * included (they hold the message), disabled and deleted ones not.
 * `endpointIds`, when given, narrows the set to those endpoints.
 */
export function matchRecipients<T extends RecipientCandidate>(
  candidates: readonly T[],
  event: {
    eventType: string;
    endpointIds?: readonly string[];
    operational?: boolean;
    channels?: readonly string[];
    payload?: unknown;
    applicationId?: string | null;
  },
): T[] {
  const only = event.endpointIds ? new Set(event.endpointIds) : undefined;
  const routed: RoutedEvent = {
    eventType: event.eventType,
    channels: event.channels ?? [],
    payload: event.payload ?? {},
  };
  return candidates.filter(
    (endpoint) =>
      !endpoint.deleted &&
      inApplicationScope(endpoint.applicationId, event.applicationId) &&
      endpoint.status !== 'disabled' &&
      (only === undefined || only.has(endpoint.id)) &&
      operationalRouteAllows(endpoint, event) &&
      endpointReceives(
        {
          eventTypes: endpoint.eventTypes,
          channels: endpoint.channels ?? [],
          filter: endpoint.filter ?? null,
        },
        routed,
      ),
  );
}

/** An endpoint as the fan-out reads it to resolve recipients (live ones only). */
export interface RecipientEndpoint {
  id: string;
  organizationId: string;
  kind: EndpointKind;
  status: EndpointStatus;
  eventTypes: readonly string[];
  channels: readonly string[];
  /** The endpoint's filter as stored (checked when saved); null for none. */
  filter: Record<string, unknown> | null;
  /** The application the endpoint belongs to; null for the organization's own. */
  applicationId: string | null;
  /** The endpoint's retry setting; null for the default schedule. */
  retry: RetryPolicy | null;
  /** An operational endpoint (absent: false). */
  operational?: boolean;
  /**
   * When the endpoint was created (ms since the epoch). An event accepted before then is not its
   * to receive, however late the event is fanned out. Absent: as old as any event.
   */
  createdAt?: number;
  /**
   * Present on a past routing: the endpoint with the event types, channels and filter it had
   * until this time (ms since the epoch), when an edit replaced them or the endpoint was deleted.
   * An event accepted before then is routed by them. Absent: the endpoint as it is now.
   */
  replacedAt?: number;
}

/** The event fields that decide its recipients and its messages. */
export interface EventToFanOut {
  id: string;
  organizationId: string;
  eventType: string;
  endpointIds?: readonly string[];
  /** Written by Hookbase as an operational event (the record's origin), never by a producer. */
  operational?: boolean;
  channels?: readonly string[];
  payload?: unknown;
  /** The application (its id) whose endpoints receive the event; absent: endpoints of none. */
  applicationId?: string;
  /** When the event was accepted (ISO 8601): endpoints created later do not receive it. */
  acceptedAt?: string;
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
 * The messages of events: one per recipient of each event (matchRecipients among the endpoints of
 * its organization that existed when it was accepted, each with the routing in force then), in
 * event order, then in the order the endpoints are given. `endpoints` holds each live endpoint as
 * it is now and may hold past routings (`replacedAt`) of live and deleted ones: an event accepted
 * before a routing was replaced is matched against that routing (the earliest replaced after its
 * acceptance), and an endpoint deleted after its acceptance still receives it. An event given
 * twice (a repeated publish) gets its messages once.
 */
export function planMessages(
  events: readonly EventToFanOut[],
  endpoints: readonly RecipientEndpoint[],
  newMessageId: () => string = () => newId('msg'),
): PlannedMessage[] {
  const byOrganization = new Map<string, Candidate[]>();
  const byId = new Map<string, Candidate>();
  /** Each organization's past routings, the earliest replaced first. */
  const pastByOrganization = new Map<string, Candidate[]>();
  /** Each organization's newest endpoint's creation: an event accepted after it needs no check. */
  const newest = new Map<string, number>();
  for (const endpoint of endpoints) {
    if (
      endpoint.createdAt !== undefined &&
      !(newest.get(endpoint.organizationId)! >= endpoint.createdAt)
    ) {
      newest.set(endpoint.organizationId, endpoint.createdAt);
    }
    const past = endpoint.replacedAt !== undefined;
    const into = past ? pastByOrganization : byOrganization;
    const candidates = into.get(endpoint.organizationId) ?? [];
    const candidate = toCandidate(endpoint, candidates.length);
    candidates.push(candidate);
    into.set(endpoint.organizationId, candidates);
    if (!past) byId.set(endpoint.id, candidate);
  }
  for (const pasts of pastByOrganization.values()) {
    pasts.sort((a, b) => a.endpoint.replacedAt! - b.endpoint.replacedAt!);
  }
  const named = (event: EventToFanOut, ids: ReadonlySet<string>): Candidate[] =>
    [...ids]
      .map((id) => byId.get(id))
      .filter(
        (candidate): candidate is Candidate =>
          candidate !== undefined && candidate.endpoint.organizationId === event.organizationId,
      )
      .sort((a, b) => a.place - b.place);
  const planned = new Set<string>();
  return events.flatMap((event) => {
    if (planned.has(event.id)) return [];
    planned.add(event.id);
    const acceptedAt = event.acceptedAt === undefined ? NaN : Date.parse(event.acceptedAt);
    // An event that names its endpoints is matched against those alone (in the order given to
    // this call), not against every endpoint of its organization.
    const only = event.endpointIds ? new Set(event.endpointIds) : undefined;
    let candidates = routingsAt(
      acceptedAt,
      only ? named(event, only) : (byOrganization.get(event.organizationId) ?? []),
      pastByOrganization.get(event.organizationId),
      only,
    );
    if (acceptedAt < (newest.get(event.organizationId) ?? -Infinity)) {
      candidates = candidates.filter(({ endpoint }) => !(endpoint.createdAt! > acceptedAt));
    }
    return matchRecipients(candidates, event).map(({ endpoint }): PlannedMessage => ({
      messageId: newMessageId(),
      eventId: event.id,
      organizationId: event.organizationId,
      endpointId: endpoint.id,
      eventType: event.eventType,
      maxAttempts: maxAttempts(endpoint.retry ?? DEFAULT_RETRY_POLICY),
      polled: endpoint.kind === 'polling',
    }));
  });
}

type Candidate = RecipientCandidate & { endpoint: RecipientEndpoint; place: number };

function toCandidate(endpoint: RecipientEndpoint, place: number): Candidate {
  return {
    id: endpoint.id,
    status: endpoint.status,
    eventTypes: endpoint.eventTypes,
    channels: endpoint.channels,
    // Compiled once per call (a batch of events), evaluated once per event.
    filter: storedFilter(endpoint.filter),
    deleted: false,
    operational: endpoint.operational ?? false,
    applicationId: endpoint.applicationId,
    endpoint,
    place,
  };
}

/**
 * Endpoints with the routing each had at `at`: an endpoint whose routing was replaced after `at`
 * takes the earliest routing replaced after it, and an endpoint deleted since (a past routing
 * with no live endpoint; with `only`, one of those) comes after the live ones. An unknown time
 * (NaN) takes the routings as they are now.
 */
function routingsAt(
  at: number,
  live: readonly Candidate[],
  pasts: readonly Candidate[] | undefined,
  only: ReadonlySet<string> | undefined,
): readonly Candidate[] {
  if (!pasts || !(at < pasts[pasts.length - 1].endpoint.replacedAt!)) return live;
  const then = new Map<string, Candidate>();
  for (const past of pasts) {
    if (past.endpoint.replacedAt! > at && !then.has(past.id) && (!only || only.has(past.id))) {
      then.set(past.id, past);
    }
  }
  const routed = live.map((candidate) => {
    const earlier = then.get(candidate.id);
    if (earlier) then.delete(candidate.id);
    return earlier ?? candidate;
  });
  for (const gone of then.values()) routed.push(gone);
  return routed;
}

/**
 * A stored filter compiled; one that no longer compiles (checked when saved, so only after a
 * change of the language) matches nothing rather than everything.
 */
function storedFilter(filter: Record<string, unknown> | null): EventPredicate | null {
  if (filter === null) return null;
  // The same filter text compiles to the same predicate: remembered, so that a fan-out of one
  // event to many endpoints does not parse every filter again for each event.
  const text = JSON.stringify(filter);
  const known = compiledFilters.get(text);
  if (known) return known;
  let predicate: EventPredicate;
  try {
    predicate = compileFilter(filter);
  } catch {
    predicate = () => false;
  }
  if (compiledFilters.size >= COMPILED_FILTERS_MAX) compiledFilters.clear();
  compiledFilters.set(text, predicate);
  return predicate;
}

/** Filters remembered compiled, at most; past it the memory starts over. */
const COMPILED_FILTERS_MAX = 10_000;
const compiledFilters = new Map<string, EventPredicate>();
