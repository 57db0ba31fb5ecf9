import type { ErrorCode } from './errors';
import { ERROR_STATUSES } from './error-statuses';

/**
 * What each error code means to a caller: what causes it, and what to do. The error reference
 * page (docs/reference/errors.md) is generated from this table and ERROR_STATUSES by
 * `npm run docs:generate`; a code without an entry here does not type-check.
 */
export const ERROR_EXPLANATIONS: Readonly<Record<ErrorCode, { cause: string; action: string }>> = {
  VALIDATION_FAILED: {
    cause:
      'The request does not match its schema: a missing or unknown field, a value out of range, a malformed cursor, or JSON beyond the limits (nesting past 64 levels, integers past ±(2^53 − 1)). `details.issues` names each field.',
    action: 'Fix the fields `details` names; send huge integers as strings.',
  },
  INVALID_JSON: {
    cause: 'The body is not valid JSON, or holds a `__proto__` or `constructor.prototype` key.',
    action: 'Send well-formed JSON without those keys.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    cause: 'A body was sent with a content type other than `application/json`.',
    action: 'Send `Content-Type: application/json`.',
  },
  PAYLOAD_TOO_LARGE: {
    cause: 'The body is larger than `HOOKBASE_MAX_PAYLOAD_BYTES` (256 KiB by default).',
    action: 'Send a smaller event, or a reference to the data instead of the data.',
  },
  HEADERS_TOO_LARGE: {
    cause: 'The request headers are larger than the HTTP server accepts.',
    action: 'Send fewer or shorter headers.',
  },
  REQUEST_TIMEOUT: {
    cause: 'The request was not received in time.',
    action: 'Retry; check the network between the client and Hookbase.',
  },
  UNAUTHORIZED: {
    cause:
      'No bearer token, or one that is not a valid API key or admin token (unknown, revoked or expired).',
    action: 'Send `Authorization: Bearer <key>` with an active key of the organization.',
  },
  FORBIDDEN: {
    cause:
      'The credential is valid but may not do this: an API key on an admin route, or on another organization.',
    action: 'Use the admin token, or a key of the organization named in the path.',
  },
  PLAN_REQUIRED: {
    cause:
      "The organization's plan does not include the feature (FIFO ordering needs `pro` or `business`).",
    action: 'Change the plan with the admin token, or leave the feature off.',
  },
  NOT_FOUND: {
    cause: 'The resource does not exist, or belongs to another organization.',
    action: 'Check the id.',
  },
  ROUTE_NOT_FOUND: {
    cause: 'No route has this method and path (also `/metrics` when metrics are off).',
    action: 'Check the path against the API reference.',
  },
  ORGANIZATION_NOT_FOUND: {
    cause: 'No organization has this id.',
    action: 'Check the id; `GET /api/organizations` lists them (admin token).',
  },
  ENDPOINT_NOT_FOUND: {
    cause: 'No endpoint of the organization has this id (or it was deleted).',
    action: 'Check the id; list the endpoints.',
  },
  EVENT_NOT_FOUND: {
    cause: 'No event of the organization has this id, or retention pruned it.',
    action: 'Check the id and the plan’s retention.',
  },
  MESSAGE_NOT_FOUND: {
    cause: 'No message of the organization has this id, or retention pruned it.',
    action: 'Check the id and the plan’s retention.',
  },
  DLQ_ENTRY_NOT_FOUND: {
    cause: 'No dead-letter entry of the organization has this id.',
    action: 'Check the id; list the DLQ.',
  },
  API_KEY_NOT_FOUND: {
    cause: 'No API key of the organization has this id.',
    action: 'Check the key id (not the key itself).',
  },
  API_KEY_REVOKED: {
    cause: 'The key to rotate is already revoked or expired.',
    action: 'Create a new key instead.',
  },
  ENDPOINT_LIMIT_REACHED: {
    cause: 'The organization has as many endpoints as its plan allows (`details.limit`).',
    action: 'Delete endpoints you no longer use, or move to a larger plan.',
  },
  IDEMPOTENCY_CONFLICT: {
    cause: 'The idempotency key was already used for an event with another type or payload.',
    action: 'Use a new key for a new event; resend the same event to get the original back.',
  },
  INVALID_URL: {
    cause: 'The endpoint URL is not an absolute http or https URL.',
    action: 'Send a full URL such as `https://example.com/webhooks`.',
  },
  URL_NOT_ALLOWED: {
    cause:
      'The URL (or a cloud `config.endpoint`) points at a private, loopback or link-local address, or a name that cannot be resolved, while `HOOKBASE_ALLOW_PRIVATE_TARGETS` is off.',
    action: 'Use a public address, or have the operator allow private targets.',
  },
  INVALID_SECRET: {
    cause: 'A signing secret given by the caller is not a `whsec_` secret of the right length.',
    action: 'Omit the secret to have one generated, or send a valid one.',
  },
  FIFO_NOT_SUPPORTED: {
    cause: 'FIFO ordering was asked for an endpoint kind that cannot have it (polling endpoints).',
    action: 'Polling endpoints are read in order already: leave `fifoEnabled` off.',
  },
  FEATURE_NOT_AVAILABLE: {
    cause:
      'The endpoint kind asked for is not available in this version (the message lists those that are).',
    action: 'Use one of the kinds the message lists.',
  },
  CREDENTIALS_REQUIRED: {
    cause:
      "A cloud endpoint without `credentials` would act as the Hookbase host's own identity, and the organization is not opted in to that (`hostCloudIdentity`).",
    action: 'Send credentials with the endpoint, or have the operator opt the organization in.',
  },
  CREDENTIALS_TARGET_CHANGED: {
    cause:
      "A PATCH changes a cloud endpoint's target (region, resource, `endpoint`, `projectId`) without sending its credentials again.",
    action: 'Send the credentials with the change, or `"credentials": null` to drop them.',
  },
  ENDPOINT_NOT_POLLING: {
    cause: 'The endpoint is not a polling endpoint, so it cannot be polled.',
    action: 'Poll an endpoint created with `kind: "polling"`.',
  },
  RATE_LIMITED: {
    cause:
      'A limit was reached: failed authentications per address, events or management requests per key, or replay-failed copies per minute (`details.limit`).',
    action: 'Wait the `Retry-After` seconds and retry; a refused request used none of the budget.',
  },
  SERVICE_UNAVAILABLE: {
    cause:
      'Kafka or PostgreSQL did not answer in time; the instance is stopping (`details.reason`: `shutting_down`) or serves as many request bodies as `HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES` allows (`request_bodies_in_flight`); or `/health/ready` found a failing check, listed in `details.checks`.',
    action:
      'Retry after `Retry-After`, with the same idempotency key for events: the event may already be stored.',
  },
  EVENT_TYPE_NOT_FOUND: {
    cause: "No event type of that name in the organization's catalog.",
    action: 'Check the name (URL-encode it in paths), or list the catalog.',
  },
  EVENT_TYPE_EXISTS: {
    cause: 'The catalog already has an event type of that name.',
    action: 'Update the existing type instead, or choose another name.',
  },
  EVENT_TYPE_UNKNOWN: {
    cause:
      "The organization's event type policy is `declared` or `validated`, and the event's type is not in its catalog or is archived.",
    action: 'Declare the type in the catalog (or unarchive it), or publish a declared type.',
  },
  PAYLOAD_INVALID: {
    cause:
      "The organization's policy is `validated` and the payload breaks its event type's JSON Schema. `details.violations` gives each violation's JSON pointer and keyword.",
    action: 'Fix the payload (or the schema, if the schema is wrong).',
  },
  SCHEMA_INVALID: {
    cause: "The event type's `schema` is not a valid JSON Schema (draft 2020-12).",
    action: 'Fix the schema at the place `details` names.',
  },
  EXAMPLE_INVALID: {
    cause: "The event type's `example` does not satisfy its own schema.",
    action: 'Fix the example or the schema; `details` names each violation.',
  },
  FILTER_INVALID: {
    cause:
      "The endpoint's `filter` is not a valid filter expression, or is too large or too costly. `details` gives the JSON pointer of the error.",
    action: 'Fix the filter at that position; try it with the filter test route.',
  },
  APPLICATION_NOT_FOUND: {
    cause:
      'No application with that id or uid in the organization (at publish, on an endpoint create, or in a route).',
    action: 'Create the application first, or check the id or uid.',
  },
  APPLICATION_UID_TAKEN: {
    cause: 'Another application of the organization already has that `uid`.',
    action: 'Use the existing application, or choose another uid.',
  },
  PAYLOAD_PURGED: {
    cause: "The event's payload was erased, so it cannot be delivered again.",
    action: 'Publish a new event if the data must still reach the receiver.',
  },
  INTERNAL: {
    cause: 'An unexpected error in Hookbase.',
    action: 'Retry; report it with the time and the request if it persists.',
  },
};

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** docs/reference/errors.md, written by `npm run docs:generate` from the error catalog. */
export function errorReferencePage(): string {
  const rows = Object.entries(ERROR_STATUSES).map(([code, status]) => {
    const { cause, action } = ERROR_EXPLANATIONS[code as ErrorCode];
    return `| \`${code}\` | ${status.http} | \`${status.grpc}\` | ${cell(cause)} | ${cell(action)} |`;
  });
  return [
    '<!-- Generated by `npm run docs:generate` from libs/domain/src/error-statuses.ts and error-reference.ts: edit those, not this page. -->',
    '',
    '# Error codes',
    '',
    'Every error Hookbase answers carries a code. Over HTTP the body is',
    '`{ "error": { "code", "message", "details"? } }` with the status below; over gRPC the status',
    'below, with the code in the `hookbase-error-code` trailing metadata. Codes are stable: match on',
    'the code, not on the message. A `429` or `503` also carries `Retry-After` (seconds); over gRPC,',
    'the `retry-after` metadata.',
    '',
    '| Code | HTTP | gRPC | Cause | What to do |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
