import { apiKeyState, describeLane, MessageStatus, shownNextAttemptAt } from '@hookbase/domain';
import type { IssuedApiKey } from '@hookbase/persistence';
import {
  hasStoredCredentials,
  isCloudDestinationKind,
  publicEndpointConfig,
  receiverOptionsView,
} from '@hookbase/destinations';
import type {
  ApiKeyEntity,
  ApplicationEntity,
  AttemptEntity,
  DlqEntryEntity,
  EndpointEntity,
  EventEntity,
  EventTypeEntity,
  LaneSnapshot,
  MessageEntity,
  OrganizationEntity,
} from '@hookbase/persistence';

/**
 * How stored rows are shown through the API. Secrets never appear here: nor signing secrets, nor
 * cloud credentials (an endpoint shows only whether it has some, as `credentials.configured`).
 */

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function organizationView(organization: OrganizationEntity) {
  return {
    id: organization.id,
    name: organization.name,
    plan: organization.plan,
    hostCloudIdentity: organization.hostCloudIdentity,
    autoDisableAfterMs: organization.autoDisableAfterMs,
    eventTypePolicy: organization.eventTypePolicy,
    portal: organization.portal,
    createdAt: iso(organization.createdAt),
  };
}

/** A declared event type as the catalog shows it. */
export function eventTypeView(type: EventTypeEntity) {
  return {
    name: type.name,
    description: type.description,
    schema: type.schema,
    example: type.example,
    deprecated: type.deprecated,
    archived: type.archived,
    version: type.version,
    createdAt: iso(type.createdAt),
    updatedAt: iso(type.updatedAt),
  };
}

/** An API key as listed: its prefix and metadata, never the key (only its hash is stored). */
export function apiKeyView(key: ApiKeyEntity) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.keyPrefix,
    state: apiKeyState(key, new Date()),
    createdAt: iso(key.createdAt),
    lastUsedAt: iso(key.lastUsedAt),
    expiresAt: iso(key.expiresAt),
    revokedAt: iso(key.revokedAt),
  };
}

/** A key just made: the one answer that holds the key itself. */
export function issuedApiKeyView(issued: IssuedApiKey) {
  return { ...apiKeyView(issued.entity), key: issued.key };
}

export function applicationView(application: ApplicationEntity) {
  return {
    id: application.id,
    uid: application.uid,
    name: application.name,
    metadata: application.metadata,
    retentionDays: application.retentionDays,
    createdAt: iso(application.createdAt),
    updatedAt: iso(application.updatedAt),
  };
}

export function endpointView(endpoint: EndpointEntity) {
  return {
    id: endpoint.id,
    applicationId: endpoint.applicationId,
    kind: endpoint.kind,
    url: endpoint.url,
    description: endpoint.description,
    config: publicEndpointConfig(endpoint.config),
    credentials: isCloudDestinationKind(endpoint.kind)
      ? { configured: hasStoredCredentials(endpoint.config) }
      : null,
    eventTypes: endpoint.eventTypes,
    channels: endpoint.channels,
    filter: endpoint.filter,
    status: endpoint.status,
    fifoEnabled: endpoint.fifoEnabled,
    retry: endpoint.retry,
    rateLimitPerSecond: endpoint.rateLimitPerSecond,
    // http: headers (sensitive values masked), auth as its type only, timeout and CA.
    ...receiverOptionsView(endpoint.kind === 'http' ? endpoint.deliveryOptions : null),
    disabledReason: endpoint.disabledReason,
    disabledAt: iso(endpoint.disabledAt),
    health: {
      failingSince: iso(endpoint.failingSince),
      consecutiveFailures: endpoint.consecutiveFailures,
      lastSuccessAt: iso(endpoint.lastSuccessAt),
    },
    createdAt: iso(endpoint.createdAt),
    updatedAt: iso(endpoint.updatedAt),
  };
}

/**
 * A message's delivery state as users see it, the same in the message log and in `fifo-state`'s
 * head: its status, attempts, and the next attempt while a retry is awaited (delivery-state.ts).
 */
function deliveryView(message: {
  status: MessageStatus;
  attempts: number;
  maxAttempts: number;
  nextAttemptAt: Date | null;
  lastResponseStatus: number | null;
  lastError: string | null;
}) {
  return {
    status: message.status,
    attempts: message.attempts,
    maxAttempts: message.maxAttempts,
    nextAttemptAt: iso(shownNextAttemptAt(message)),
    lastResponseStatus: message.lastResponseStatus,
    lastError: message.lastError,
  };
}

export function messageView(message: MessageEntity) {
  return {
    id: message.id,
    eventId: message.eventId,
    endpointId: message.endpointId,
    eventType: message.eventType,
    ...deliveryView(message),
    createdAt: iso(message.createdAt),
    updatedAt: iso(message.updatedAt),
    finishedAt: iso(message.finishedAt),
    replayOf: message.replayOf,
  };
}

export function attemptView(attempt: AttemptEntity) {
  return {
    id: attempt.id,
    attempt: attempt.attemptNumber,
    startedAt: iso(attempt.startedAt),
    durationMs: attempt.durationMs,
    outcome: attempt.outcome,
    responseStatus: attempt.responseStatus,
    responseExcerpt: attempt.responseExcerpt,
    error: attempt.error,
  };
}

/** An event in a list: what it was, for whom and when; no payload (GET one event for it). */
export function eventListItemView(event: Omit<EventEntity, 'payload'>) {
  return {
    id: event.id,
    eventType: event.eventType,
    applicationId: event.applicationId,
    channels: event.channels,
    idempotencyKey: event.idempotencyKey,
    acceptedAt: iso(event.acceptedAt),
    payloadPurgedAt: iso(event.payloadPurgedAt),
  };
}

export function eventView(event: EventEntity, messages: MessageEntity[]) {
  return {
    id: event.id,
    eventType: event.eventType,
    applicationId: event.applicationId,
    payload: event.payload,
    channels: event.channels,
    idempotencyKey: event.idempotencyKey,
    acceptedAt: iso(event.acceptedAt),
    payloadPurgedAt: iso(event.payloadPurgedAt),
    messages: messages.map(messageView),
  };
}

export function dlqEntryView(entry: DlqEntryEntity) {
  return {
    id: entry.id,
    messageId: entry.messageId,
    endpointId: entry.endpointId,
    eventId: entry.eventId,
    eventType: entry.eventType,
    reason: entry.reason,
    attempts: entry.attempts,
    lastError: entry.lastError,
    lastResponseStatus: entry.lastResponseStatus,
    createdAt: iso(entry.createdAt),
    retriedAt: iso(entry.retriedAt),
    retryMessageId: entry.retryMessageId,
  };
}

/** `GET .../fifo-state`: the endpoint's FIFO queue as API.md describes it. */
export function fifoStateView(
  endpoint: EndpointEntity,
  lane: LaneSnapshot,
  leaseMs: number,
  now: Date,
) {
  const { head } = lane;
  const description = describeLane({
    endpointStatus: endpoint.status,
    queueDepth: lane.queueDepth,
    head,
    lease: lane.lease,
    leaseMs,
    now,
  });
  return {
    fifoEnabled: endpoint.fifoEnabled,
    ...description,
    queueDepth: lane.queueDepth,
    waitingCount: Math.max(0, lane.queueDepth - (head ? 1 : 0)),
    oldestQueuedAt: head ? iso(head.queuedAt) : null,
    lagSeconds: head
      ? Math.max(0, Math.round((now.getTime() - head.queuedAt.getTime()) / 1000))
      : 0,
    head: head
      ? {
          messageId: head.messageId,
          eventType: head.eventType,
          ...deliveryView(head),
        }
      : null,
    leaseSeconds: Math.round(leaseMs / 1000),
  };
}
