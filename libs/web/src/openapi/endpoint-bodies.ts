import { z } from 'zod';
import {
  createEndpointSchema,
  DISABLED_REASONS,
  ENDPOINT_KINDS,
  ENDPOINT_STATUSES,
  RECEIVER_AUTH_TYPES,
  updateEndpointSchema,
} from '@hookbase/domain';
import {
  awsCredentialsSchema,
  CLOUD_DESTINATION_KINDS,
  destinationConfigSchemas,
  googleCredentialsSchema,
} from '@hookbase/destinations';
import type { JsonSchema } from './route-description';

/**
 * The endpoint bodies as the API accepts them: the controller parses createEndpointSchema /
 * updateEndpointSchema, then EndpointSettingsService validates a cloud kind's `config` with its
 * schema from libs/destinations. The document shows both steps at once, as one branch per kind.
 */

const KIND_DESCRIPTIONS: Record<(typeof CLOUD_DESTINATION_KINDS)[number], string> = {
  sqs: 'An SQS queue (`queueUrl`; a `.fifo` queue gets the endpoint id as message group).',
  sns: 'An SNS topic (`topicArn` in `region`; a `.fifo` topic gets the endpoint id as message group).',
  eventbridge:
    'An EventBridge bus (`eventBusName`, events with `source` and the event type as detail-type).',
  pubsub: 'A Pub/Sub topic (`projectId`, `topic`; FIFO endpoints publish with an ordering key).',
  s3: 'An S3 bucket: one JSON object per message under `prefix` (`expectedBucketOwner`: the owning account, checked by S3).',
};

const CREDENTIALS_NOTE =
  "`credentials` are stored encrypted (AES-256-GCM) and never returned (FEATURE_NOT_AVAILABLE when the installation has no HOOKBASE_CREDENTIALS_KEY). Leaving them out uses the Hookbase host's own cloud identity, refused with CREDENTIALS_REQUIRED unless the operator opted the organization in (`hostCloudIdentity`) for this account, region or project, and always with an `endpoint` override. `endpoint` overrides the service address (emulators, VPC endpoints) and follows HOOKBASE_ALLOW_PRIVATE_TARGETS as http URLs do; a name that cannot be resolved is refused.";

function cloudConfig(kind: (typeof CLOUD_DESTINATION_KINDS)[number], forPatch: boolean) {
  const schema = destinationConfigSchemas[kind] as z.ZodType;
  if (!forPatch)
    return schema.meta({ description: `${KIND_DESCRIPTIONS[kind]} ${CREDENTIALS_NOTE}` });
  // On a PATCH, config replaces the stored one, except that `credentials` left out keeps the
  // stored credentials and `credentials: null` removes them.
  const credentials = (
    kind === 'pubsub' ? googleCredentialsSchema : awsCredentialsSchema
  ).nullable();
  const base = destinationConfigSchemas[kind] as unknown as z.ZodObject;
  return base.safeExtend({ credentials: credentials.optional() }).meta({
    description: `${KIND_DESCRIPTIONS[kind]} Replaces the stored config; \`credentials\` left out keeps the stored ones (refused with CREDENTIALS_TARGET_CHANGED when the target changes: region, endpoint, project, queue, topic, bus or bucket), \`null\` removes them. ${CREDENTIALS_NOTE}`,
  });
}

export const createEndpointBody = z.union([
  createEndpointSchema.extend({
    kind: z.enum(['http', 'polling']).default('http'),
    config: z
      .strictObject({})
      .optional()
      .meta({ description: 'http and polling endpoints take no config: only `{}`.' }),
  }),
  ...CLOUD_DESTINATION_KINDS.map((kind) =>
    createEndpointSchema.extend({ kind: z.literal(kind), config: cloudConfig(kind, false) }),
  ),
]);

export const updateEndpointBody = updateEndpointSchema.extend({
  config: z
    .union([
      ...CLOUD_DESTINATION_KINDS.map((kind) => cloudConfig(kind, true)),
      z
        .strictObject({})
        .meta({ description: 'http and polling endpoints take no config: only `{}`.' }),
    ])
    .optional()
    .meta({ description: "The config of the endpoint's kind (a kind cannot change)." }),
});

const nullable = (type: string): JsonSchema => ({ type: [type, 'null'] });

/** An endpoint as the API shows it (views.ts): never a credential nor a signing secret. */
export const endpointBody: JsonSchema = {
  type: 'object',
  required: ['id', 'kind', 'config', 'credentials', 'eventTypes', 'status', 'fifoEnabled'],
  properties: {
    id: { type: 'string' },
    applicationId: {
      type: ['string', 'null'],
      description: 'The application the endpoint belongs to; null for the organization itself.',
    },
    kind: { enum: [...ENDPOINT_KINDS] },
    url: nullable('string'),
    description: nullable('string'),
    config: {
      type: 'object',
      description: 'The stored config, without `credentials` (cloud kinds).',
    },
    credentials: {
      description:
        'Cloud kinds: whether credentials are stored (they are never shown); null for other kinds.',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['configured'],
          properties: { configured: { type: 'boolean' } },
        },
      ],
    },
    eventTypes: { type: 'array', items: { type: 'string' } },
    channels: { type: 'array', items: { type: 'string' } },
    filter: { type: ['object', 'null'] },
    status: { enum: [...ENDPOINT_STATUSES] },
    fifoEnabled: { type: 'boolean' },
    retry: { type: 'object' },
    rateLimitPerSecond: nullable('integer'),
    headers: {
      type: 'array',
      description:
        'http: headers added to every request; a sensitive value is never shown (`********`).',
      items: {
        type: 'object',
        required: ['name', 'value', 'sensitive'],
        properties: {
          name: { type: 'string' },
          value: { type: 'string' },
          sensitive: { type: 'boolean' },
        },
      },
    },
    auth: {
      description: 'http: the receiver authentication configured (never its secrets), or null.',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['type', 'configured'],
          properties: {
            type: { enum: [...RECEIVER_AUTH_TYPES] },
            configured: { const: true },
          },
        },
      ],
    },
    timeoutMs: {
      ...nullable('integer'),
      description: "http: this endpoint's timeout (null: HOOKBASE_DELIVERY_TIMEOUT_MS).",
    },
    tlsCa: { ...nullable('string'), description: 'http: PEM CA bundle trusted for this endpoint.' },
    disabledReason: {
      description:
        'Why the endpoint is disabled: `manual`, or `failing` (only failures for the auto-disable period); null while enabled.',
      oneOf: [{ type: 'null' }, { enum: [...DISABLED_REASONS] }],
    },
    disabledAt: nullable('string'),
    health: {
      type: 'object',
      description:
        'The failure streak: since when every attempt failed (null: the last one succeeded), how many in a row, and the last success (written at most once a minute while all goes well).',
      required: ['failingSince', 'consecutiveFailures', 'lastSuccessAt'],
      properties: {
        failingSince: nullable('string'),
        consecutiveFailures: { type: 'integer' },
        lastSuccessAt: nullable('string'),
      },
    },
    createdAt: nullable('string'),
    updatedAt: nullable('string'),
  },
};

/** What a test send answers: the attempt, made now and not recorded. */
export const testSendBody: JsonSchema = {
  type: 'object',
  required: [
    'webhookId',
    'eventType',
    'outcome',
    'responseStatus',
    'durationMs',
    'responseExcerpt',
    'error',
  ],
  properties: {
    webhookId: { type: 'string' },
    eventType: { type: 'string' },
    outcome: { enum: ['succeeded', 'retry', 'failed'] },
    responseStatus: nullable('integer'),
    durationMs: { type: 'integer' },
    responseExcerpt: nullable('string'),
    error: nullable('string'),
  },
};
