import { z } from 'zod';
import { applicationRefSchema, isApplicationId, isApplicationUid } from './applications';
import { portalSettingsSchema } from './portal-access';
import { DomainError } from './errors';
import {
  AWS_ACCOUNT_ID_PATTERN,
  AWS_REGION_PATTERN,
  GOOGLE_PROJECT_ID_PATTERN,
} from './host-identity';
import { DLQ_REASONS, ENDPOINT_KINDS, ENDPOINT_STATUSES, MESSAGE_STATUSES, PLANS } from './model';
import { OPERATIONAL_EVENT_TYPES } from './operational-events';
import { receiverOptionFields } from './receiver-options';
import { EVENT_TYPE_SUBSCRIPTION_PATTERN } from './recipients';
import { isJsonObject, jsonObject } from './json-object';
import { FieldTest, listTest, Parser, textTest, withQuickPath } from './quick-parse';
import { isStorableText, unstorableTextAt } from './storable-text';

/**
 * What clients may send, as schemas. Unknown fields are rejected so that a typo never passes
 * silently. `parseInput` turns a failure into one VALIDATION_FAILED error listing every problem.
 */

export const EVENT_TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:\-/]*$/;
const EVENT_TYPE_MAX = 256;
const eventType = z
  .string()
  .min(1)
  .max(EVENT_TYPE_MAX)
  .regex(EVENT_TYPE_PATTERN, 'letters, digits and _ . : - / only');
/** An id Hookbase made with `prefix` (see ids.ts). */
export const idPattern = (prefix: string) => new RegExp(`^${prefix}_[0-9a-z]{26}$`);
const prefixedId = (prefix: string) =>
  z.string().regex(idPattern(prefix), `must be an id starting with ${prefix}_`);

const STORABLE_MESSAGE = 'contains U+0000 or an unpaired surrogate, which cannot be stored';

/** A JSON object whose every key and string can be stored (see storable-text.ts). */
const storablePayload = jsonObject((payload) => {
  const at = unstorableTextAt(payload);
  return at === null ? null : `${at} ${STORABLE_MESSAGE}`;
});

/** A channel name: what events are published on and endpoints listen on. */
export const CHANNEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:\-/]*$/;
const channel = z
  .string()
  .min(1)
  .max(128)
  .regex(CHANNEL_PATTERN, 'letters, digits and _ . : - / only');

/** An endpoint's subscription: a type, or a prefix wildcard (`order.*`, `*`); see recipients.ts. */
const eventTypeSubscription = z
  .string()
  .min(1)
  .max(256)
  .regex(
    EVENT_TYPE_SUBSCRIPTION_PATTERN,
    'an event type, or a prefix ending in .* :* /* or -* (or * alone)',
  );

export const publishEventSchema = z.strictObject({
  eventType,
  payload: storablePayload,
  /** Channels the event is published on (up to 10): endpoints with channels receive only those. */
  channels: z.array(channel).min(1).max(10).optional(),
  idempotencyKey: z.string().min(1).max(256).refine(isStorableText, STORABLE_MESSAGE).optional(),
  endpointIds: z.array(prefixedId('ep')).min(1).max(100).optional(),
  /** The application (id or uid) whose endpoints receive the event; none: endpoints of none. */
  applicationId: applicationRefSchema.optional(),
});
export type PublishEventInput = z.infer<typeof publishEventSchema>;

/** The optional fields of an event, which `eventFieldTests` may find absent. */
export const OPTIONAL_EVENT_FIELDS = [
  'channels',
  'idempotencyKey',
  'endpointIds',
  'applicationId',
] as const;

/** The rules of an event's fields, as `withQuickPath` tests them (the last four optional). */
export const eventFieldTests: Readonly<
  Record<'eventType' | 'payload' | (typeof OPTIONAL_EVENT_FIELDS)[number], FieldTest>
> = {
  eventType: textTest(EVENT_TYPE_PATTERN, 1, EVENT_TYPE_MAX),
  payload: (value) => isJsonObject(value) && unstorableTextAt(value) === null,
  channels: listTest(textTest(CHANNEL_PATTERN, 1, 128), 1, 10),
  idempotencyKey: (value) =>
    typeof value === 'string' && value.length >= 1 && value.length <= 256 && isStorableText(value),
  endpointIds: listTest(textTest(idPattern('ep')), 1, 100),
  applicationId: (value) =>
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= 256 &&
    (isApplicationId(value) || isApplicationUid(value)),
};

/** `publishEventSchema`, quick for an event as producers send it (see withQuickPath). */
export const publishEventParser: Parser<PublishEventInput> = withQuickPath(
  publishEventSchema,
  eventFieldTests,
  OPTIONAL_EVENT_FIELDS,
);

/**
 * An organization's opt-in to the Hookbase host's cloud identity for its cloud endpoints that
 * carry no credentials (see host-identity.ts); `null` is off. A list given is the whole set
 * allowed; a list left out does not restrict. Only the admin token sets it.
 */
export const hostCloudIdentitySchema = z
  .strictObject({
    awsAccountIds: z
      .array(z.string().regex(AWS_ACCOUNT_ID_PATTERN, 'must be a 12-digit AWS account id'))
      .min(1)
      .max(100)
      .optional(),
    awsRegions: z
      .array(z.string().regex(AWS_REGION_PATTERN, 'must be an AWS region such as us-east-1'))
      .min(1)
      .max(50)
      .optional(),
    googleProjectIds: z
      .array(z.string().regex(GOOGLE_PROJECT_ID_PATTERN, 'must be a Google Cloud project id'))
      .min(1)
      .max(100)
      .optional(),
  })
  .nullable();
export type HostCloudIdentityInput = z.infer<typeof hostCloudIdentitySchema>;

/**
 * How long the organization's endpoints may fail without a success before they are disabled;
 * null: the installation's HOOKBASE_AUTO_DISABLE_AFTER.
 */
const autoDisableAfterMs = z
  .number()
  .int()
  .min(1_000)
  .max(365 * 24 * 3600 * 1000)
  .nullable();

export const createOrganizationSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  plan: z.enum(PLANS).default('free'),
  hostCloudIdentity: hostCloudIdentitySchema.default(null),
  autoDisableAfterMs: autoDisableAfterMs.default(null),
});
export type CreateOrganizationInput = z.infer<typeof createOrganizationSchema>;

export const updateOrganizationSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  plan: z.enum(PLANS).optional(),
  hostCloudIdentity: hostCloudIdentitySchema.optional(),
  autoDisableAfterMs: autoDisableAfterMs.optional(),
  /** Portal branding and embedding origins; null clears them. */
  portal: portalSettingsSchema.optional(),
});
export type UpdateOrganizationInput = z.infer<typeof updateOrganizationSchema>;

const endpointFields = {
  url: z.string().max(2048).optional(),
  description: z.string().max(500).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  eventTypes: z.array(eventTypeSubscription).max(200).optional(),
  /** Channels the endpoint listens on; empty (the default) for every channel. */
  channels: z.array(channel).max(10).optional(),
  /** A content filter (event-filter.ts), checked when saved; null removes it. */
  filter: z
    .record(z.string(), z.unknown())
    .superRefine((filter, context) => {
      const at = unstorableTextAt(filter);
      if (at !== null) context.addIssue({ code: 'custom', message: `${at} ${STORABLE_MESSAGE}` });
    })
    .nullable()
    .optional(),
  status: z.enum(ENDPOINT_STATUSES).optional(),
  fifoEnabled: z.boolean().optional(),
  retry: z.unknown().optional(),
  rateLimitPerSecond: z.number().int().min(1).max(100_000).nullable().optional(),
  /** http endpoints only: headers, auth, timeout and trusted CA (receiver-options.ts). */
  ...receiverOptionFields,
};

export const createEndpointSchema = z.strictObject({
  kind: z.enum(ENDPOINT_KINDS).default('http'),
  ...endpointFields,
  secret: z.string().optional(),
  /** The application (id or uid) the endpoint belongs to, for good; none: the organization's. */
  applicationId: applicationRefSchema.optional(),
});
export type CreateEndpointInput = z.infer<typeof createEndpointSchema>;

export const updateEndpointSchema = z.strictObject(endpointFields);
export type UpdateEndpointInput = z.infer<typeof updateEndpointSchema>;

const operationalEndpointFields = {
  description: z.string().max(500).optional(),
  /** Empty: every operational event type. */
  eventTypes: z
    .array(z.enum(OPERATIONAL_EVENT_TYPES))
    .max(OPERATIONAL_EVENT_TYPES.length)
    .optional(),
  status: z.enum(ENDPOINT_STATUSES).optional(),
  retry: z.unknown().optional(),
};

/** An operational endpoint: an http receiver of operational events, with its own secret. */
export const createOperationalEndpointSchema = z.strictObject({
  url: z.string().max(2048),
  ...operationalEndpointFields,
  secret: z.string().optional(),
});
export type CreateOperationalEndpointInput = z.infer<typeof createOperationalEndpointSchema>;

export const updateOperationalEndpointSchema = z.strictObject({
  url: z.string().max(2048).optional(),
  ...operationalEndpointFields,
});

/** `POST …/webhook-endpoints/:id/test`: one example message, sent now outside every queue. */
export const testSendSchema = z.strictObject({
  eventType: eventType.default('hookbase.test'),
  payload: storablePayload.default({ test: true, message: 'A test message from Hookbase' }),
});
export type TestSendInput = z.infer<typeof testSendSchema>;

/** An event to try an endpoint's routing on (`POST …/webhook-endpoints/:id/filter/test`). */
export const filterTestSchema = z.strictObject({
  eventType,
  payload: z.record(z.string(), z.unknown()),
  channels: z.array(channel).max(10).optional(),
});

export const rotateSecretSchema = z.strictObject({
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600)
    .default(24 * 3600),
});

export const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(250).default(50),
  cursor: z.string().max(200).optional(),
});

/** The instant an ISO 8601 time names, checked to lie in years 1 to 9999 (what the store holds). */
const instantWithOffset = () =>
  z.iso.datetime({ offset: true }).refine(
    (value) => {
      const time = Date.parse(value);
      // Not a timestamp at all: the format check above says so, once.
      if (Number.isNaN(time)) return true;
      const year = new Date(time).getUTCFullYear();
      return year >= 1 && year <= 9999;
    },
    { message: 'must name an instant between the years 1 and 9999' },
  );

/** Endpoints listed, optionally only those of one application (id or uid). */
export const endpointQuerySchema = listQuerySchema.extend({
  applicationId: applicationRefSchema.optional(),
});

/** Applications listed, optionally only those whose uid starts with a prefix. */
export const applicationQuerySchema = listQuerySchema.extend({
  uidPrefix: z.string().min(1).max(256).refine(isStorableText, STORABLE_MESSAGE).optional(),
});

export const messageQuerySchema = listQuerySchema
  .extend({
    endpointId: z.string().max(100).optional(),
    /** Only messages to endpoints of this application (id or uid). */
    applicationId: applicationRefSchema.optional(),
    status: z.enum(MESSAGE_STATUSES).optional(),
    eventType: z.string().max(256).optional(),
    /** Only messages created at or after this time (ISO 8601 with an offset). */
    createdAfter: instantWithOffset().optional(),
    /** Only messages created before this time (ISO 8601 with an offset). */
    createdBefore: instantWithOffset().optional(),
  })
  .refine(
    (query) =>
      !query.createdAfter ||
      !query.createdBefore ||
      Date.parse(query.createdAfter) <= Date.parse(query.createdBefore),
    { path: ['createdBefore'], message: 'createdBefore must not be earlier than createdAfter' },
  );

/**
 * The events list: newest first, paged with `cursor`. The times are the event's acceptance
 * (`acceptedAt`); items carry no payload (GET one event for it).
 */
export const eventQuerySchema = listQuerySchema
  .extend({
    /** Only events published for this application (id or uid). */
    applicationId: applicationRefSchema.optional(),
    eventType: z.string().max(256).optional(),
    /** Only events accepted at or after this time (ISO 8601 with an offset). */
    createdAfter: instantWithOffset().optional(),
    /** Only events accepted before this time (ISO 8601 with an offset). */
    createdBefore: instantWithOffset().optional(),
  })
  .refine(
    (query) =>
      !query.createdAfter ||
      !query.createdBefore ||
      Date.parse(query.createdAfter) <= Date.parse(query.createdBefore),
    { path: ['createdBefore'], message: 'createdBefore must not be earlier than createdAfter' },
  );

export const dlqQuerySchema = listQuerySchema.extend({
  endpointId: z.string().max(100).optional(),
  /** Only entries of endpoints of this application (id or uid). */
  applicationId: applicationRefSchema.optional(),
  reason: z.enum(DLQ_REASONS).optional(),
});

export const replayFailedSchema = z
  .strictObject({
    /** Only messages created at or after this time. */
    since: instantWithOffset().optional(),
    /** Only messages created before this time. */
    until: instantWithOffset().optional(),
    /** Only messages of these event types (wildcards as in endpoint subscriptions: `order.*`). */
    eventTypes: z.array(eventTypeSubscription).min(1).max(50).optional(),
    /** Go on after this message: the `nextAfter` of the previous call, when it had more to copy. */
    after: prefixedId('msg').optional(),
  })
  .refine((body) => !body.since || !body.until || Date.parse(body.since) < Date.parse(body.until), {
    path: ['until'],
    message: 'until must be later than since',
  });

export const createApiKeySchema = z.strictObject({
  name: z.string().trim().min(1).max(200).refine(isStorableText, STORABLE_MESSAGE).optional(),
  /** When the key stops working by itself; must be in the future when the key is made. */
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});
export type CreateApiKeyInput = z.infer<typeof createApiKeySchema>;

export const rotateApiKeySchema = z.strictObject({
  /** How long the old key keeps working beside the new one; 0 (the default) revokes it at once. */
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600)
    .default(0),
});

export interface ValidationIssue {
  path: string;
  message: string;
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S>;
export function parseInput<T>(schema: Parser<T>, input: unknown): T;
export function parseInput<T>(schema: Parser<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(body)',
    message: issue.message,
  }));
  const summary = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw new DomainError('VALIDATION_FAILED', `Invalid request: ${summary}`, { issues });
}
