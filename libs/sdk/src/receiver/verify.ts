import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** The most the timestamp may differ from now (the `standardwebhooks` package's own limit). */
export const MAX_TOLERANCE_SECONDS = 300;

/** A delivery that passed verification. */
export interface WebhookEvent<Payload = unknown> {
  /** `webhook-id`: the message id, the same on every retry and replay. Deduplicate by it. */
  id: string;
  /** `webhook-timestamp`: when this attempt was signed. */
  timestamp: Date;
  /**
   * `hookbase-event-id`, when sent: the event's id, the same for every endpoint the event went to
   * (each endpoint's message has an id of its own).
   */
  eventId?: string;
  /** `hookbase-event-type`, when sent. */
  eventType?: string;
  /** `hookbase-attempt` (1 for the first attempt), when sent. */
  attempt?: number;
  /** The parsed JSON body: the event's payload. */
  payload: Payload;
}

export type WebhookFailureCode =
  'MISSING_HEADERS' | 'TIMESTAMP_OUT_OF_TOLERANCE' | 'INVALID_SIGNATURE' | 'INVALID_PAYLOAD';

/** Why a delivery was refused; the middlewares answer 401 with `{ error: { code, message } }`. */
export class WebhookVerificationFailed extends Error {
  override readonly name = 'WebhookVerificationFailed';
  constructor(
    readonly code: WebhookFailureCode,
    message: string,
  ) {
    super(message);
  }
}

/** A secret, several (during a rotation), or a function answering them when a delivery arrives. */
export type SecretSource = string | string[] | (() => string | string[]);

export interface VerifyOptions {
  /** The endpoint's signing secret(s), `whsec_…`. */
  secret: SecretSource;
  /** How far the timestamp may be from now, in seconds (default and at most 300). */
  toleranceSeconds?: number;
  /** The clock (tests). */
  now?: () => Date;
}

export type HeaderBag =
  | Headers
  | Record<string, string | string[] | number | undefined>
  | { get(name: string): string | null };

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Record<string, unknown>;
  const value =
    record[name] ??
    Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1] ??
    undefined;
  if (Array.isArray(value)) return value.length ? String(value[0]) : undefined;
  return value === undefined || value === null ? undefined : String(value);
}

function secretsOf(source: SecretSource): string[] {
  const value = typeof source === 'function' ? source() : source;
  const list = (Array.isArray(value) ? value : [value]).filter(Boolean);
  if (!list.length) throw new TypeError('Hookbase webhook verification: no secret configured');
  return list;
}

/**
 * Verifies a delivery's Standard Webhooks signature over the exact bytes received and its
 * timestamp against the tolerance, and answers the parsed event, or throws
 * `WebhookVerificationFailed`. `rawBody` must be the body as received, before any JSON parsing.
 */
export function verifyWebhook<Payload = unknown>(
  rawBody: string | Buffer | Uint8Array,
  headers: HeaderBag,
  options: VerifyOptions,
): WebhookEvent<Payload> {
  const tolerance = Math.min(
    options.toleranceSeconds ?? MAX_TOLERANCE_SECONDS,
    MAX_TOLERANCE_SECONDS,
  );
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) {
    throw new WebhookVerificationFailed(
      'MISSING_HEADERS',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  }
  const seconds = Number(timestamp);
  const now = (options.now?.() ?? new Date()).getTime() / 1000;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > tolerance) {
    throw new WebhookVerificationFailed(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `webhook-timestamp is not within ${tolerance} s of now`,
    );
  }
  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody);
  const signed = {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signature,
  };
  let verified = false;
  for (const secret of secretsOf(options.secret)) {
    try {
      new Webhook(secret).verify(body, signed, { jsonParse: false });
      verified = true;
      break;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
    }
  }
  if (!verified) {
    throw new WebhookVerificationFailed('INVALID_SIGNATURE', 'No signature matches the secret');
  }
  let payload: Payload;
  try {
    payload = JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as Payload;
  } catch {
    throw new WebhookVerificationFailed('INVALID_PAYLOAD', 'The body is not JSON');
  }
  const attempt = Number(header(headers, 'hookbase-attempt'));
  return {
    id,
    timestamp: new Date(seconds * 1000),
    eventId: header(headers, 'hookbase-event-id'),
    eventType: header(headers, 'hookbase-event-type'),
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : undefined,
    payload,
  };
}

/** The 401 body the middlewares answer, in the Hookbase error format. */
export function failureBody(error: WebhookVerificationFailed) {
  return { error: { code: error.code, message: error.message } };
}
