import { z } from 'zod';
import { DEFAULT_MAX_BATCH_EVENTS } from '@hookbase/config';
import {
  createApiKeySchema,
  createOrganizationSchema,
  dlqQuerySchema,
  ErrorCode,
  listQuerySchema,
  messageQuerySchema,
  pollQuerySchema,
  publishEventSchema,
  replayFailedSchema,
  rotateApiKeySchema,
  rotateSecretSchema,
  updateOrganizationSchema,
} from '@hookbase/domain';
import { createEndpointBody, endpointBody, updateEndpointBody } from './endpoint-bodies';

/**
 * Every HTTP route the services serve, described once: what the OpenAPI document
 * (`buildOpenApiDocument`) is generated from. Request schemas are the zod schemas the controllers
 * parse with; error codes are those the route's guard, parser and handler can raise. A test
 * checks that this list and the routes Nest registers are the same.
 */

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';
export type Security = 'none' | 'apiKey' | 'admin';

export interface NamedSchema {
  /** Name under components.schemas. */
  name: string;
  schema: z.ZodType;
}

/** A loose JSON Schema for a success body: only fields the code returns. */
export type JsonSchema = Record<string, unknown>;

export interface RouteSpec {
  method: HttpMethod;
  /** OpenAPI form: `/api/organizations/{orgId}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  security: Security;
  body?: NamedSchema & { required: boolean };
  /** Query parameters, from an object schema. */
  query?: NamedSchema;
  success: { status: number; description: string; schema: JsonSchema; contentType?: string };
  /** Error codes besides those implied by security, body and store access. */
  errors: ErrorCode[];
  /** Reads or writes PostgreSQL (so 503 SERVICE_UNAVAILABLE when it is down). */
  usesStore: boolean;
}

export interface RouteCatalog {
  title: string;
  version: string;
  description: string;
  routes: RouteSpec[];
}

const object: JsonSchema = { type: 'object' };
const nullable = (type: string): JsonSchema => ({ type: [type, 'null'] });
const fifoState: JsonSchema = {
  type: 'object',
  required: [
    'fifoEnabled',
    'state',
    'blocked',
    'blockedReason',
    'queueDepth',
    'waitingCount',
    'oldestQueuedAt',
    'lagSeconds',
    'head',
    'leaseSeconds',
  ],
  properties: {
    fifoEnabled: { type: 'boolean' },
    state: { enum: ['idle', 'delivering', 'blocked', 'paused'] },
    blocked: { type: 'boolean' },
    blockedReason: { enum: ['retrying', 'circuit_open', 'disabled', 'paused', 'lease', null] },
    queueDepth: { type: 'integer', minimum: 0 },
    waitingCount: { type: 'integer', minimum: 0 },
    oldestQueuedAt: nullable('string'),
    lagSeconds: { type: 'integer', minimum: 0 },
    head: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: [
            'messageId',
            'eventType',
            'status',
            'attempts',
            'maxAttempts',
            'nextAttemptAt',
            'lastResponseStatus',
            'lastError',
          ],
          properties: {
            messageId: { type: 'string' },
            eventType: { type: 'string' },
            status: { type: 'string' },
            attempts: { type: 'integer' },
            maxAttempts: { type: 'integer' },
            nextAttemptAt: nullable('string'),
            lastResponseStatus: nullable('integer'),
            lastError: nullable('string'),
          },
        },
      ],
    },
    leaseSeconds: { type: 'integer' },
  },
};
const data = (schema: JsonSchema = object): JsonSchema => ({
  type: 'object',
  required: ['data'],
  properties: { data: schema },
});
const page = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: ['data', 'nextCursor', ...Object.keys(extra)],
  properties: {
    data: { type: 'array', items: object },
    nextCursor: {
      type: ['string', 'null'],
      description: 'Pass as `cursor` for the next page; null on the last page.',
    },
    ...extra,
  },
});
const polledMessage: JsonSchema = {
  type: 'object',
  required: [
    'messageId',
    'webhookId',
    'replayOf',
    'eventId',
    'eventType',
    'payload',
    'acceptedAt',
    'createdAt',
    'sequence',
    'cursor',
  ],
  properties: {
    messageId: { type: 'string', description: "This message's id in the message log." },
    webhookId: {
      type: 'string',
      description:
        'What a webhook would carry as `webhook-id`: the original message id, for a replay copy too. Deduplicate by it.',
    },
    replayOf: nullable('string'),
    eventId: { type: 'string' },
    eventType: { type: 'string' },
    payload: object,
    acceptedAt: { type: 'string', description: 'When the event was accepted.' },
    createdAt: { type: 'string', description: 'When the message entered the poll log.' },
    sequence: { type: 'string', description: 'Its place in the poll log (a decimal integer).' },
    cursor: {
      type: 'string',
      description:
        'Pass as `cursor` to resume after this message (signed: an altered one is a 400).',
    },
  },
};
const pollPage: JsonSchema = {
  type: 'object',
  required: ['data', 'nextCursor'],
  properties: {
    data: { type: 'array', items: polledMessage },
    nextCursor: {
      type: 'string',
      description:
        'Pass as `cursor` on the next poll; unchanged when no message was returned. Signed by the server: a made-up or altered cursor answers 400 VALIDATION_FAILED.',
    },
  },
};
const apiKey: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'prefix', 'state', 'createdAt', 'lastUsedAt', 'expiresAt', 'revokedAt'],
  properties: {
    id: { type: 'string' },
    name: nullable('string'),
    prefix: { type: 'string', description: 'The first characters of the key, to tell keys apart.' },
    state: { enum: ['active', 'revoked', 'expired'] },
    createdAt: { type: 'string' },
    lastUsedAt: {
      type: ['string', 'null'],
      description: 'When the key was last checked against the store (at most once per cache time).',
    },
    expiresAt: nullable('string'),
    revokedAt: nullable('string'),
  },
};
const issuedApiKey: JsonSchema = {
  ...apiKey,
  required: [...(apiKey.required as string[]), 'key'],
  properties: {
    ...(apiKey.properties as JsonSchema),
    key: { type: 'string', description: 'The key itself: shown in this answer only.' },
  },
};
const secretKey = data({
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string', description: 'whsec_…' } },
});

/** Limits that the running configuration sets, so the served document states them. */
export interface CatalogLimits {
  maxBatchEvents: number;
}

const publishBatchSchema = (max: number) =>
  z.object({ events: z.array(publishEventSchema).min(1).max(max) });

const ORG = '/api/organizations/{orgId}';
const ENDPOINT = `${ORG}/webhook-endpoints/{endpointId}`;

export const hookbaseRoutes = (limits: CatalogLimits): RouteSpec[] => [
  {
    method: 'post',
    path: '/v1/events',
    operationId: 'publishEvent',
    tag: 'Events',
    summary:
      'Publish one event. Answers once Kafka has it; an idempotency key seen before answers the first result.',
    security: 'apiKey',
    body: { name: 'PublishEvent', schema: publishEventSchema, required: true },
    success: { status: 202, description: 'Accepted', schema: data() },
    errors: ['IDEMPOTENCY_CONFLICT'],
    usesStore: true,
  },
  {
    method: 'post',
    path: '/v1/events/batch',
    operationId: 'publishEventBatch',
    tag: 'Events',
    summary: `Publish up to ${limits.maxBatchEvents} events (HOOKBASE_MAX_BATCH_EVENTS); each is accepted or refused on its own, results in the order sent.`,
    security: 'apiKey',
    body: {
      name: 'PublishEventBatch',
      schema: publishBatchSchema(limits.maxBatchEvents),
      required: true,
    },
    success: {
      status: 207,
      description:
        'One result per event: `{ status: 202, data }` or `{ status, error: { code, message, details? } }`',
      schema: data({
        type: 'array',
        items: {
          type: 'object',
          required: ['status'],
          properties: { status: { type: 'integer' }, data: object, error: object },
        },
      }),
    },
    errors: [],
    usesStore: true,
  },
  {
    method: 'post',
    path: '/api/organizations',
    operationId: 'createOrganization',
    tag: 'Organizations',
    summary:
      "Create an organization (admin). `hostCloudIdentity` (default null, off) lets its cloud endpoints without credentials use the Hookbase host's cloud identity, for the listed AWS accounts, AWS regions and Google projects when lists are given.",
    security: 'admin',
    body: { name: 'CreateOrganization', schema: createOrganizationSchema, required: true },
    success: { status: 201, description: 'The organization', schema: data() },
    errors: [],
    usesStore: true,
  },
  {
    method: 'get',
    path: ORG,
    operationId: 'getOrganization',
    tag: 'Organizations',
    summary: "The API key's own organization.",
    security: 'apiKey',
    success: { status: 200, description: 'The organization', schema: data() },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'patch',
    path: ORG,
    operationId: 'updateOrganization',
    tag: 'Organizations',
    summary:
      "Change an organization's name, plan or `hostCloudIdentity` (admin; null turns the host identity off).",
    security: 'admin',
    body: { name: 'UpdateOrganization', schema: updateOrganizationSchema, required: true },
    success: { status: 200, description: 'The organization', schema: data() },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'post',
    path: `${ORG}/api-keys`,
    operationId: 'createApiKey',
    tag: 'API keys',
    summary:
      'Create an API key (admin), with an optional name and expiry. The key is shown in this answer only; its hash is stored.',
    security: 'admin',
    body: { name: 'CreateApiKey', schema: createApiKeySchema, required: false },
    success: { status: 201, description: 'The new key', schema: data(issuedApiKey) },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ORG}/api-keys`,
    operationId: 'listApiKeys',
    tag: 'API keys',
    summary:
      "The organization's API keys, newest first (admin): prefix and metadata, never the key.",
    security: 'admin',
    success: {
      status: 200,
      description: 'The keys',
      schema: data({ type: 'array', items: apiKey }),
    },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'delete',
    path: `${ORG}/api-keys/{keyId}`,
    operationId: 'revokeApiKey',
    tag: 'API keys',
    summary:
      'Revoke an API key (admin): refused at once by the process that revoked it, by every other within HOOKBASE_API_KEY_CACHE_MS.',
    security: 'admin',
    success: { status: 200, description: 'The revoked key', schema: data(apiKey) },
    errors: ['ORGANIZATION_NOT_FOUND', 'API_KEY_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'post',
    path: `${ORG}/api-keys/{keyId}/rotate`,
    operationId: 'rotateApiKey',
    tag: 'API keys',
    summary:
      'Replace an API key by a new one with the same name and expiry (admin); the old one is revoked at once, or expires after `overlapSeconds`.',
    security: 'admin',
    body: { name: 'RotateApiKey', schema: rotateApiKeySchema, required: false },
    success: {
      status: 200,
      description: 'The new key, and the old one as it now is',
      schema: data({
        ...issuedApiKey,
        required: [...(issuedApiKey.required as string[]), 'previous'],
        properties: { ...(issuedApiKey.properties as JsonSchema), previous: apiKey },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'API_KEY_NOT_FOUND', 'API_KEY_REVOKED'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ORG}/webhook-endpoints`,
    operationId: 'listEndpoints',
    tag: 'Endpoints',
    summary: 'List endpoints, oldest first.',
    security: 'apiKey',
    query: { name: 'ListQuery', schema: listQuerySchema },
    success: { status: 200, description: 'A page of endpoints', schema: page() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED'],
    usesStore: true,
  },
  {
    method: 'post',
    path: `${ORG}/webhook-endpoints`,
    operationId: 'createEndpoint',
    tag: 'Endpoints',
    summary:
      'Create an endpoint: `http`, a cloud kind (`sqs`, `sns`, `eventbridge`, `pubsub`, `s3`; `config` per kind) or `polling`.',
    security: 'apiKey',
    body: { name: 'CreateEndpoint', schema: createEndpointBody, required: true },
    success: { status: 201, description: 'The endpoint', schema: data(endpointBody) },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'INVALID_URL',
      'URL_NOT_ALLOWED',
      'INVALID_SECRET',
      'FIFO_NOT_SUPPORTED',
      'FEATURE_NOT_AVAILABLE',
      'CREDENTIALS_REQUIRED',
      'PLAN_REQUIRED',
      'ENDPOINT_LIMIT_REACHED',
    ],
    usesStore: true,
  },
  {
    method: 'get',
    path: ENDPOINT,
    operationId: 'getEndpoint',
    tag: 'Endpoints',
    summary: 'One endpoint.',
    security: 'apiKey',
    success: { status: 200, description: 'The endpoint', schema: data(endpointBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'patch',
    path: ENDPOINT,
    operationId: 'updateEndpoint',
    tag: 'Endpoints',
    summary: 'Change an endpoint.',
    security: 'apiKey',
    body: { name: 'UpdateEndpoint', schema: updateEndpointBody, required: true },
    success: { status: 200, description: 'The endpoint', schema: data(endpointBody) },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'ENDPOINT_NOT_FOUND',
      'INVALID_URL',
      'URL_NOT_ALLOWED',
      'FIFO_NOT_SUPPORTED',
      'FEATURE_NOT_AVAILABLE',
      'CREDENTIALS_REQUIRED',
      'CREDENTIALS_TARGET_CHANGED',
      'PLAN_REQUIRED',
    ],
    usesStore: true,
  },
  {
    method: 'delete',
    path: ENDPOINT,
    operationId: 'deleteEndpoint',
    tag: 'Endpoints',
    summary:
      'Delete an endpoint; its queued messages are dead-lettered (endpoint_deleted) when next seen.',
    security: 'apiKey',
    success: {
      status: 200,
      description: 'Deleted',
      schema: data({
        type: 'object',
        required: ['id', 'deleted'],
        properties: { id: { type: 'string' }, deleted: { const: true } },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ENDPOINT}/secret`,
    operationId: 'getEndpointSecret',
    tag: 'Endpoints',
    summary: "The endpoint's current signing secret.",
    security: 'apiKey',
    success: { status: 200, description: 'The secret', schema: secretKey },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND', 'NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'post',
    path: `${ENDPOINT}/secret/rotate`,
    operationId: 'rotateEndpointSecret',
    tag: 'Endpoints',
    summary: 'A new signing secret; older ones keep signing until the overlap ends.',
    security: 'apiKey',
    body: { name: 'RotateSecret', schema: rotateSecretSchema, required: false },
    success: { status: 200, description: 'The new secret', schema: secretKey },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND', 'NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ENDPOINT}/fifo-state`,
    operationId: 'getEndpointFifoState',
    tag: 'Endpoints',
    summary:
      "The endpoint's FIFO queue: depth, lag, its head, and whether (and why) it is blocked.",
    security: 'apiKey',
    success: { status: 200, description: 'The FIFO state', schema: data(fifoState) },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ENDPOINT}/poll`,
    operationId: 'pollEndpoint',
    tag: 'Endpoints',
    summary:
      "A polling endpoint's next messages after `cursor`, in acceptance order, and the cursor to pass next. Polling past a message acknowledges it (`succeeded`); a paused or disabled endpoint answers an empty page.",
    security: 'apiKey',
    query: { name: 'PollQuery', schema: pollQuerySchema },
    success: { status: 200, description: 'The next messages', schema: pollPage },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'ENDPOINT_NOT_FOUND',
      'ENDPOINT_NOT_POLLING',
      'VALIDATION_FAILED',
    ],
    usesStore: true,
  },
  {
    method: 'post',
    path: `${ENDPOINT}/replay-failed`,
    operationId: 'replayFailedMessages',
    tag: 'Replays',
    summary:
      "Send again, as copies, the endpoint's failed messages in id order (since a time, if given): at most HOOKBASE_REPLAY_FAILED_MAX_PER_CALL per call and HOOKBASE_REPLAY_FAILED_PER_MINUTE per organization and minute; pass `nextAfter` back as `after` to go on.",
    security: 'apiKey',
    body: { name: 'ReplayFailed', schema: replayFailedSchema, required: false },
    success: {
      status: 202,
      description: 'How many copies were queued, and where to go on',
      schema: data({
        type: 'object',
        required: ['replayed', 'nextAfter'],
        properties: {
          replayed: { type: 'integer' },
          nextAfter: {
            type: ['string', 'null'],
            description:
              'Set when more failed messages may follow: send it as `after` in the next call.',
          },
        },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ORG}/messages`,
    operationId: 'listMessages',
    tag: 'Message log',
    summary: 'The message log, with filters.',
    security: 'apiKey',
    query: { name: 'MessageQuery', schema: messageQuerySchema },
    success: { status: 200, description: 'A page of messages', schema: page() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ORG}/messages/{messageId}`,
    operationId: 'getMessage',
    tag: 'Message log',
    summary: 'One message with its attempt history.',
    security: 'apiKey',
    success: { status: 200, description: 'The message', schema: data() },
    errors: ['ORGANIZATION_NOT_FOUND', 'MESSAGE_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'post',
    path: `${ORG}/messages/{messageId}/replay`,
    operationId: 'replayMessage',
    tag: 'Replays',
    summary: 'Send a copy of a message at once (`replayOf` names the original).',
    security: 'apiKey',
    success: { status: 202, description: 'The copy', schema: data() },
    errors: ['ORGANIZATION_NOT_FOUND', 'MESSAGE_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ORG}/events/{eventId}`,
    operationId: 'getEvent',
    tag: 'Message log',
    summary: 'One event with its messages (once the fan-out has recorded it).',
    security: 'apiKey',
    success: { status: 200, description: 'The event', schema: data() },
    errors: ['ORGANIZATION_NOT_FOUND', 'EVENT_NOT_FOUND'],
    usesStore: true,
  },
  {
    method: 'get',
    path: `${ORG}/dlq`,
    operationId: 'listDlq',
    tag: 'DLQ',
    summary: 'Dead-lettered messages, with filters.',
    security: 'apiKey',
    query: { name: 'DlqQuery', schema: dlqQuerySchema },
    success: { status: 200, description: 'A page of DLQ entries', schema: page() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED'],
    usesStore: true,
  },
  {
    method: 'post',
    path: `${ORG}/dlq/{dlqId}/retry`,
    operationId: 'retryDlqEntry',
    tag: 'DLQ',
    summary: 'Send a copy of a dead-lettered message at once.',
    security: 'apiKey',
    success: { status: 202, description: 'The copy', schema: data() },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'DLQ_ENTRY_NOT_FOUND',
      'MESSAGE_NOT_FOUND',
      'ENDPOINT_NOT_FOUND',
    ],
    usesStore: true,
  },
  {
    method: 'get',
    path: '/api/invalid-events',
    operationId: 'listInvalidEvents',
    tag: 'Operations',
    summary: 'Records on the events topic that could not be accepted, newest first (admin).',
    security: 'admin',
    query: { name: 'ListQuery', schema: listQuerySchema },
    success: {
      status: 200,
      description: 'A page of invalid records with their total count',
      schema: page({ total: { type: 'integer' } }),
    },
    errors: ['VALIDATION_FAILED'],
    usesStore: true,
  },
  {
    method: 'get',
    path: '/health',
    operationId: 'health',
    tag: 'Operations',
    summary: 'Liveness: answers once the process serves HTTP.',
    security: 'none',
    success: {
      status: 200,
      description: 'Serving',
      schema: data({
        type: 'object',
        required: ['status'],
        properties: { status: { const: 'ok' } },
      }),
    },
    errors: [],
    usesStore: false,
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    tag: 'Operations',
    summary: 'This document.',
    security: 'none',
    success: { status: 200, description: 'OpenAPI 3.1 document', schema: object },
    errors: [],
    usesStore: false,
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'apiDocs',
    tag: 'Operations',
    summary: 'This document as an HTML page.',
    security: 'none',
    success: {
      status: 200,
      description: 'HTML page',
      schema: { type: 'string' },
      contentType: 'text/html',
    },
    errors: [],
    usesStore: false,
  },
];

/** The catalog under the given limits; `HOOKBASE_CATALOG` is the one under the defaults. */
export const hookbaseCatalog = (limits: CatalogLimits): RouteCatalog => ({
  title: 'Hookbase HTTP API',
  version: '0.1.0',
  description:
    'Webhook and event delivery. Every error answers `{ error: { code, message, details? } }`. JSON bodies nested beyond 64 levels, integers beyond ±(2^53 − 1) and numbers that overflow a double are refused with 400 VALIDATION_FAILED (send such values as strings); keys `__proto__` and `constructor.prototype` with 400 INVALID_JSON. Every response carries `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`. Generated from the code (libs/web/src/openapi); regenerate with `npm run openapi`.',
  routes: hookbaseRoutes(limits),
});

export const HOOKBASE_CATALOG: RouteCatalog = hookbaseCatalog({
  maxBatchEvents: DEFAULT_MAX_BATCH_EVENTS,
});
