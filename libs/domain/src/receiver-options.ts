import { z } from 'zod';
import { DomainError } from './errors';
import type { ValidationIssue } from './inputs';

/**
 * What an http endpoint may add to its requests so that real receivers accept them: its own
 * headers (some sensitive), an authentication scheme, a timeout of its own and a CA it trusts.
 * The rules here are pure; sealing at rest and sending live in libs/destinations.
 */

export const MAX_RECEIVER_HEADERS = 20;
export const MAX_HEADER_VALUE_LENGTH = 4096;
/** The shortest per-endpoint timeout; the longest is HOOKBASE_DELIVERY_TIMEOUT_MS. */
export const MIN_ENDPOINT_TIMEOUT_MS = 100;

/** RFC 9110 `token`: what a header field name may be made of. */
const HEADER_NAME_PATTERN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Names Hookbase sets itself or that belong to the connection, not the message: a receiver-chosen
 * value would break signing, framing or the connection. Compared lower-cased.
 */
export const RESERVED_HEADER_NAMES: readonly string[] = [
  'content-type',
  'content-length',
  'content-encoding',
  'host',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
];
export const RESERVED_HEADER_PREFIXES: readonly string[] = ['webhook-', 'hookbase-'];

/** Why a header name cannot be used, or null when it can. */
export function headerNameRefusal(name: string, options: { hasAuth: boolean }): string | null {
  if (!HEADER_NAME_PATTERN.test(name)) return 'must be an HTTP header name (a token)';
  const lower = name.toLowerCase();
  if (RESERVED_HEADER_NAMES.includes(lower)) return `${lower} is set by Hookbase and reserved`;
  const prefix = RESERVED_HEADER_PREFIXES.find((p) => lower.startsWith(p));
  if (prefix) return `${prefix}* headers are set by Hookbase and reserved`;
  if (lower === 'authorization' && options.hasAuth) {
    return 'authorization is set by `auth`: use one or the other';
  }
  return null;
}

/** A header value: visible ASCII, spaces and tabs, no line breaks. */
const HEADER_VALUE_PATTERN = /^[\t\x20-\x7e]*$/;

const headerInput = z.strictObject({
  name: z.string().min(1).max(256),
  /** Left out only for a sensitive header already stored: its stored value is kept. */
  value: z
    .string()
    .max(MAX_HEADER_VALUE_LENGTH)
    .regex(HEADER_VALUE_PATTERN, 'must be visible ASCII characters, spaces or tabs')
    .optional(),
  sensitive: z.boolean().default(false),
});
export type ReceiverHeaderInput = z.infer<typeof headerInput>;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/;
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+-----END [A-Z ]*PRIVATE KEY-----/;
const pemCertificates = z
  .string()
  .max(65_536)
  .regex(PEM_CERTIFICATE, 'must be PEM certificates (-----BEGIN CERTIFICATE-----)');

const httpsOrHttpUrl = z
  .string()
  .max(2048)
  .refine((raw) => URL.canParse(raw) && /^https?:$/.test(new URL(raw).protocol), {
    message: 'must be an absolute http or https URL',
  });

export const receiverAuthSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('basic'),
    username: z
      .string()
      .min(1)
      .max(256)
      .regex(/^[^:\r\n]*$/, 'must not contain a colon or a line break'),
    password: z
      .string()
      .max(1024)
      .regex(/^[^\r\n]*$/, 'must not contain a line break'),
  }),
  z.strictObject({
    type: z.literal('bearer'),
    token: z
      .string()
      .min(1)
      .max(4096)
      .regex(HEADER_VALUE_PATTERN, 'must be visible ASCII characters'),
  }),
  z.strictObject({
    type: z.literal('oauth2_client_credentials'),
    tokenUrl: httpsOrHttpUrl,
    clientId: z.string().min(1).max(1024),
    clientSecret: z.string().min(1).max(4096),
    scope: z.string().min(1).max(1024).optional(),
    audience: z.string().min(1).max(1024).optional(),
  }),
  z.strictObject({
    type: z.literal('mtls'),
    certificate: pemCertificates,
    privateKey: z.string().max(65_536).regex(PEM_PRIVATE_KEY, 'must be a PEM private key'),
  }),
]);
export type ReceiverAuth = z.infer<typeof receiverAuthSchema>;
export type ReceiverAuthType = ReceiverAuth['type'];
export const RECEIVER_AUTH_TYPES = [
  'basic',
  'bearer',
  'oauth2_client_credentials',
  'mtls',
] as const satisfies readonly ReceiverAuthType[];

/** The receiver fields of endpoint create and PATCH bodies (http endpoints only). */
export const receiverOptionFields = {
  headers: z.array(headerInput).max(MAX_RECEIVER_HEADERS).nullable().optional(),
  auth: receiverAuthSchema.nullable().optional(),
  timeoutMs: z.number().int().min(MIN_ENDPOINT_TIMEOUT_MS).nullable().optional(),
  tlsCa: pemCertificates.nullable().optional(),
};

/** A header as stored: its value in clear, or sealed (sensitive). */
export type StoredReceiverHeader =
  { name: string; value: string } | { name: string; sealedValue: string };

/**
 * An http endpoint's receiver options as stored (the endpoint row's `delivery_options`; null when
 * none is set, so the common path reads and does nothing more). `auth.sealed` holds the whole auth
 * object sealed; `auth.host` is the URL host it was given for.
 */
export interface StoredReceiverOptions {
  headers?: StoredReceiverHeader[];
  auth?: { type: ReceiverAuthType; host: string; sealed: string };
  timeoutMs?: number;
  tlsCa?: string;
}

/** The options opened for one attempt: what the http adapter applies. */
export interface ReceiverOptions {
  headers: readonly (readonly [string, string])[];
  auth: ReceiverAuth | null;
  timeoutMs: number | null;
  tlsCa: string | null;
}

/** Throws VALIDATION_FAILED listing every issue (paths like `headers.2.name`). */
export function refuseIssues(issues: ValidationIssue[]): void {
  if (issues.length === 0) return;
  const summary = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw new DomainError('VALIDATION_FAILED', `Invalid request: ${summary}`, { issues });
}

/**
 * The checks on a header list that a schema cannot make alone: reserved and malformed names,
 * duplicates (case-insensitive), and a missing value unless a sensitive one of that name is stored.
 */
export function headerIssues(
  headers: readonly ReceiverHeaderInput[],
  options: { hasAuth: boolean; storedSensitive: ReadonlySet<string> },
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  headers.forEach((header, index) => {
    const refusal = headerNameRefusal(header.name, options);
    if (refusal) issues.push({ path: `headers.${index}.name`, message: refusal });
    const lower = header.name.toLowerCase();
    if (seen.has(lower)) {
      issues.push({ path: `headers.${index}.name`, message: `${lower} is given twice` });
    }
    seen.add(lower);
    if (header.value === undefined && !(header.sensitive && options.storedSensitive.has(lower))) {
      issues.push({
        path: `headers.${index}.value`,
        message: 'is required (only a stored sensitive header may leave it out to keep its value)',
      });
    }
  });
  return issues;
}

/** The host (with port) that stored auth is bound to, from an endpoint URL. */
export function authHostOf(url: string): string {
  return new URL(url).host.toLowerCase();
}

/**
 * Stored auth goes only to the host it was given for: a new URL on another host that keeps it is
 * refused (CREDENTIALS_TARGET_CHANGED), as for cloud credentials and their target.
 */
export function checkAuthBinding(storedHost: string, newUrl: string): void {
  if (authHostOf(newUrl) !== storedHost) {
    throw new DomainError(
      'CREDENTIALS_TARGET_CHANGED',
      'auth must be sent again (or set to null) to change the URL to another host: stored auth stays bound to the host it was given for',
      { fields: ['url', 'auth'] },
    );
  }
}

/** The per-endpoint timeout, at most the installation's delivery timeout. */
export function checkEndpointTimeout(timeoutMs: number, maxMs: number): void {
  if (timeoutMs > maxMs) {
    refuseIssues([
      {
        path: 'timeoutMs',
        message: `must be at most ${maxMs} (HOOKBASE_DELIVERY_TIMEOUT_MS)`,
      },
    ]);
  }
}

/** How an endpoint shows a header: a sensitive value is never returned. */
export const MASKED_HEADER_VALUE = '********';
