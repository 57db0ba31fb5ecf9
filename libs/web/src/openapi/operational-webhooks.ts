import {
  LANE_BLOCKED_REASONS,
  OPERATIONAL_EVENT_TYPES,
  type OperationalEventType,
} from '@hookbase/domain';
import type { JsonSchema } from './route-description';

/**
 * The OpenAPI `webhooks` section: what Hookbase POSTs to operational endpoints, one entry per
 * operational event type (signed with Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, and `hookbase-event-type` naming the type).
 */

const time = { type: 'string', format: 'date-time' };
const streak = {
  consecutiveFailures: { type: 'integer' },
  failingSince: time,
};

const DATA: Record<
  OperationalEventType,
  { summary: string; properties: Record<string, JsonSchema> }
> = {
  'endpoint.created': {
    summary: 'An endpoint was created.',
    properties: { kind: { type: 'string' } },
  },
  'endpoint.updated': {
    summary: 'An endpoint was changed; `fields` names what the request set (never the values).',
    properties: { fields: { type: 'array', items: { type: 'string' } } },
  },
  'endpoint.deleted': { summary: 'An endpoint was deleted.', properties: {} },
  'endpoint.disabled': {
    summary:
      'An endpoint was disabled: `manual`, or `failing` after only failures for the auto-disable period.',
    properties: { reason: { enum: ['manual', 'failing'] }, ...streak },
  },
  'endpoint.enabled': { summary: 'A disabled endpoint was enabled again.', properties: {} },
  'message.attempt.failing': {
    summary:
      'An endpoint has failed HOOKBASE_OPERATIONAL_FAILING_AFTER attempts in a row (once per streak).',
    properties: streak,
  },
  'message.attempt.exhausted': {
    summary:
      'A message was dead-lettered, with the reason: after its last attempt, or without one (a new message skipped by an open circuit, its endpoint deleted, past its max age); then lastError and lastResponseStatus are null.',
    properties: {
      messageId: { type: 'string' },
      eventId: { type: 'string' },
      eventType: { type: 'string' },
      reason: { type: 'string' },
      attempts: { type: 'integer' },
      lastError: { type: ['string', 'null'] },
      lastResponseStatus: { type: ['integer', 'null'] },
    },
  },
  'message.attempt.recovered': {
    summary: 'The first success after a failure streak.',
    properties: { failures: { type: 'integer' } },
  },
  'fifo.queue.blocked': {
    summary:
      'A FIFO queue has been held for HOOKBASE_OPERATIONAL_FIFO_BLOCKED_AFTER (its head failing, or held by a paused or disabled endpoint, an open circuit or a stopped worker), with the queue state.',
    properties: {
      state: {
        type: 'object',
        properties: {
          blockedReason: { enum: [...LANE_BLOCKED_REASONS] },
          blockedSince: time,
          head: {
            type: 'object',
            properties: {
              messageId: { type: 'string' },
              eventType: { type: 'string' },
              attempts: { type: 'integer' },
              nextAttemptAt: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
  },
  'fifo.queue.unblocked': {
    summary:
      'The queue reported by fifo.queue.blocked moves again: its head was delivered or dead-lettered, or the endpoint deleted.',
    properties: { messageId: { type: 'string' }, blockedSince: time },
  },
};

export function operationalWebhooks(): Record<string, { post: JsonSchema }> {
  return Object.fromEntries(
    OPERATIONAL_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `operational_${type.replaceAll('.', '_')}`,
          summary: DATA[type].summary,
          tags: ['Operational webhooks'],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['type', 'timestamp', 'data'],
                  properties: {
                    type: { const: type },
                    timestamp: time,
                    data: {
                      type: 'object',
                      required: ['endpointId'],
                      properties: { endpointId: { type: 'string' }, ...DATA[type].properties },
                    },
                  },
                },
              },
            },
          },
          responses: {
            '2XX': { description: 'Received; any other answer is retried or dead-lettered.' },
          },
        },
      },
    ]),
  );
}
