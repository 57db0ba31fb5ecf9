/**
 * What the cloud SDKs' errors have in common below the service: a connection that failed or took
 * too long. Shared by the AWS and Google classifications; pure.
 */

/** Node's and undici's codes for a connection that failed: the service was not reached. */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_STREAM_PREMATURE_CLOSE',
  'EPROTO',
]);

/** Names and codes that mean "no answer in time". */
export const TIMEOUT_NAMES: ReadonlySet<string> = new Set(['TimeoutError', 'AbortError']);
export const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ABORT_ERR',
]);

/** The longest error text kept with an attempt. */
export const MAX_ERROR_TEXT = 500;

export interface ErrorShape {
  name?: unknown;
  code?: unknown;
  Code?: unknown;
  message?: unknown;
  cause?: unknown;
}

export function asShape(error: unknown): ErrorShape {
  return typeof error === 'object' && error !== null ? (error as ErrorShape) : {};
}

export function stringField(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The AWS SDK wraps an error that is not `instanceof Error` in its realm (e.g. Node's own errors
 * under Jest's sandbox) as `AWS SDK error wrapper for Error: connect ECONNREFUSED ...`, dropping
 * its code: only the text is left.
 */
const SDK_WRAPPER = /^AWS SDK error wrapper for (?:Error: )?/;
const CODE_IN_TEXT = /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+)\b/g;

/**
 * The system error code of an error, of its cause (fetch-style errors wrap the real one), or as a
 * last resort a known code named in its message.
 */
export function systemCode(error: unknown): string | undefined {
  const shape = asShape(error);
  const code = stringField(shape.code) ?? stringField(asShape(shape.cause).code);
  if (code !== undefined) return code;
  const message = stringField(shape.message) ?? '';
  return [...message.matchAll(CODE_IN_TEXT)]
    .map((match) => match[1])
    .find((candidate) => NETWORK_ERROR_CODES.has(candidate) || TIMEOUT_CODES.has(candidate));
}

export function isTimeout(error: unknown): boolean {
  const shape = asShape(error);
  const name = stringField(shape.name);
  const code = systemCode(error);
  return (
    (name !== undefined && TIMEOUT_NAMES.has(name)) ||
    (code !== undefined && TIMEOUT_CODES.has(code))
  );
}

export function isNetworkFailure(error: unknown): boolean {
  const code = systemCode(error);
  return code !== undefined && NETWORK_ERROR_CODES.has(code);
}

/** One line of text, bounded. */
export function errorText(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_ERROR_TEXT ? `${line.slice(0, MAX_ERROR_TEXT - 1)}…` : line;
}

/** `network: <CODE> <message>`, like the HTTP adapter's network errors. */
export function networkText(error: unknown): string {
  const code = systemCode(error);
  const shape = asShape(error);
  const message = (
    stringField(shape.message) ??
    stringField(asShape(shape.cause).message) ??
    String(error)
  ).replace(SDK_WRAPPER, '');
  return errorText(`network: ${code && !message.includes(code) ? `${code} ` : ''}${message}`);
}
