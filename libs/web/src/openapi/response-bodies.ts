import type { JsonSchema } from './route-description';

/**
 * Pieces of the success bodies that routes describe (@DescribeRoute): loose JSON Schemas naming
 * only fields the code returns.
 */

export const anyObject: JsonSchema = { type: 'object' };
const nullable = (type: string): JsonSchema => ({ type: [type, 'null'] });
export const fifoStateBody: JsonSchema = {
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
export const dataOf = (schema: JsonSchema = anyObject): JsonSchema => ({
  type: 'object',
  required: ['data'],
  properties: { data: schema },
});
export const pageOf = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: ['data', 'nextCursor', ...Object.keys(extra)],
  properties: {
    data: { type: 'array', items: anyObject },
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
    payload: anyObject,
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
export const pollPageBody: JsonSchema = {
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
export const apiKeyBody: JsonSchema = {
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
export const issuedApiKeyBody: JsonSchema = {
  ...apiKeyBody,
  required: [...(apiKeyBody.required as string[]), 'key'],
  properties: {
    ...(apiKeyBody.properties as JsonSchema),
    key: { type: 'string', description: 'The key itself: shown in this answer only.' },
  },
};
export const secretKeyBody = dataOf({
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string', description: 'whsec_…' } },
});

const attemptFields = {
  id: { type: 'string' },
  attempt: { type: 'integer' },
  startedAt: { type: 'string' },
  durationMs: nullable('integer'),
  outcome: { enum: ['succeeded', 'retry', 'failed'] },
  responseStatus: nullable('integer'),
  responseExcerpt: nullable('string'),
  error: nullable('string'),
};

/** `GET .../webhook-endpoints/:endpointId/stats`: the last hour, minute by minute. */
export const endpointStatsBody: JsonSchema = {
  type: 'object',
  required: [
    'from',
    'to',
    'minutes',
    'succeeded',
    'failed',
    'successRate',
    'lastAttemptAt',
    'recentAttempts',
  ],
  properties: {
    from: { type: 'string' },
    to: { type: 'string' },
    minutes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['minute', 'succeeded', 'failed', 'p50Ms', 'maxMs'],
        properties: {
          minute: { type: 'string' },
          succeeded: { type: 'integer', minimum: 0 },
          failed: { type: 'integer', minimum: 0 },
          p50Ms: nullable('integer'),
          maxMs: nullable('integer'),
        },
      },
    },
    succeeded: { type: 'integer', minimum: 0 },
    failed: { type: 'integer', minimum: 0 },
    successRate: nullable('number'),
    lastAttemptAt: nullable('string'),
    recentAttempts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['messageId', ...Object.keys(attemptFields)],
        properties: { messageId: { type: 'string' }, ...attemptFields },
      },
    },
  },
};

/** `GET .../applications/:appId/stats`: the same over an application's live endpoints together. */
export const applicationStatsBody: JsonSchema = {
  ...endpointStatsBody,
  required: [...(endpointStatsBody.required as string[]), 'endpoints'],
  properties: {
    ...(endpointStatsBody.properties as Record<string, JsonSchema>),
    endpoints: {
      type: 'integer',
      minimum: 0,
      description: 'How many live endpoints of the application the figures cover.',
    },
  },
};

/** An application as the API shows it (views.ts). */
export const applicationBody: JsonSchema = {
  type: 'object',
  required: ['id', 'uid', 'name', 'metadata', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    uid: { type: ['string', 'null'] },
    name: { type: 'string' },
    metadata: { type: 'object' },
    retentionDays: {
      type: ['number', 'null'],
      description: "Days its log is kept, at most the plan's; null: the plan's.",
    },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
};
