/**
 * The judgement on one delivery attempt, made from what the transport saw. One function for every
 * destination kind, so all of them retry by the same rule (DESIGN.md, "outcome of an attempt").
 */

/** What the transport saw on one attempt, before any judgement. */
export type AttemptResult =
  | { type: 'response'; status: number; retryAfter?: string | null }
  | { type: 'timeout' }
  | { type: 'network'; message: string };

/** The judgement on one attempt. */
export type AttemptOutcome =
  | { kind: 'succeeded'; status: number }
  | { kind: 'retry'; status?: number; error: string; retryAfterMs?: number }
  | { kind: 'failed'; status?: number; error: string };

/** The 4xx statuses that mean "not now" rather than "never": timeout, too early, rate limited. */
const RETRYABLE_CLIENT_ERRORS: ReadonlySet<number> = new Set([408, 425, 429]);

/** A receiver may push its next attempt back this far at most; the schedule still applies. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

export function classifyAttempt(result: AttemptResult, now: Date): AttemptOutcome {
  switch (result.type) {
    case 'timeout':
      return { kind: 'retry', error: 'timeout' };
    case 'network':
      return { kind: 'retry', error: `network: ${result.message}` };
    case 'response':
      return classifyResponse(result.status, result.retryAfter, now);
    default: {
      const unreachable: never = result;
      throw new Error(`unknown attempt result ${JSON.stringify(unreachable)}`);
    }
  }
}

type StatusClass =
  'informational' | 'successful' | 'redirection' | 'client_error' | 'server_error' | 'invalid';

const STATUS_CLASSES = [
  'informational',
  'successful',
  'redirection',
  'client_error',
  'server_error',
] as const satisfies readonly StatusClass[];

function statusClass(status: number): StatusClass {
  if (!Number.isInteger(status) || status < 100 || status > 599) return 'invalid';
  return STATUS_CLASSES[Math.floor(status / 100) - 1];
}

function classifyResponse(
  status: number,
  retryAfter: string | null | undefined,
  now: Date,
): AttemptOutcome {
  const error = `HTTP ${status}`;
  const statusKind = statusClass(status);
  switch (statusKind) {
    case 'successful':
      return { kind: 'succeeded', status };
    case 'informational':
      return { kind: 'failed', status, error: `${error} (not a final response)` };
    case 'redirection':
      // Following a redirect would send the payload somewhere the endpoint's owner never chose.
      return { kind: 'failed', status, error: `${error} (redirects are not followed)` };
    case 'client_error':
      if (!RETRYABLE_CLIENT_ERRORS.has(status)) return { kind: 'failed', status, error };
      return retryResponse(status, error, retryAfter, now);
    case 'server_error':
      return retryResponse(status, error, retryAfter, now);
    case 'invalid':
      return { kind: 'failed', status, error: `${error} (not a valid status code)` };
    default: {
      const unreachable: never = statusKind;
      throw new Error(`unknown status class ${String(unreachable)}`);
    }
  }
}

function retryResponse(
  status: number,
  error: string,
  retryAfter: string | null | undefined,
  now: Date,
): AttemptOutcome {
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  return retryAfterMs === undefined
    ? { kind: 'retry', status, error }
    : { kind: 'retry', status, error, retryAfterMs };
}

/**
 * A Retry-After value (RFC 9110 §10.2.3) as milliseconds from `now`: delay-seconds or an
 * HTTP-date, clamped to [0, maxMs] (a date already past means "now"). Anything else, negative
 * or fractional seconds included, is ignored: undefined.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: Date,
  maxMs: number = MAX_RETRY_AFTER_MS,
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  let delayMs: number;
  if (/^\d+$/.test(text)) {
    delayMs = Number(text) * 1000;
  } else {
    const at = parseHttpDate(text, now);
    if (at === undefined) return undefined;
    delayMs = at - now.getTime();
  }
  return Math.min(Math.max(delayMs, 0), maxMs);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = '(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// The three forms RFC 9110 §5.6.7 obliges a recipient to accept. Matched exactly, not with
// Date.parse, which also takes local-time and free-form dates and so depends on the machine.
const IMF_FIXDATE = new RegExp(
  `^(?:mon|tue|wed|thu|fri|sat|sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} gmt$`,
  'i',
);
const RFC850_DATE = new RegExp(
  `^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} gmt$`,
  'i',
);
const ASCTIME_DATE = new RegExp(
  `^(?:mon|tue|wed|thu|fri|sat|sun) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`,
  'i',
);

/** An HTTP-date as epoch milliseconds, or undefined when it is not one. */
function parseHttpDate(text: string, now: Date): number | undefined {
  let match = IMF_FIXDATE.exec(text);
  if (match) {
    const [, day, month, year, hour, minute, second] = match;
    return utc(Number(year), month, Number(day), hour, minute, second);
  }
  match = RFC850_DATE.exec(text);
  if (match) {
    const [, day, month, yy, hour, minute, second] = match;
    // A two-digit year is the one within 50 years of now; RFC 9110 reads a year more than 50
    // years ahead as the century before.
    const thisYear = now.getUTCFullYear();
    let year = thisYear - (thisYear % 100) + Number(yy);
    if (year > thisYear + 50) year -= 100;
    else if (year <= thisYear - 50) year += 100;
    return utc(year, month, Number(day), hour, minute, second);
  }
  match = ASCTIME_DATE.exec(text);
  if (match) {
    const [, month, day, hour, minute, second, year] = match;
    return utc(Number(year), month, Number(day.trim()), hour, minute, second);
  }
  return undefined;
}

function utc(
  year: number,
  monthName: string,
  day: number,
  hour: string,
  minute: string,
  second: string,
): number | undefined {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  const [h, m, s] = [Number(hour), Number(minute), Number(second)];
  // 60 seconds allows a leap second; Date.UTC carries it into the next minute.
  if (h > 23 || m > 59 || s > 60) return undefined;
  const midnight = new Date(Date.UTC(year, month, day));
  if (day < 1 || midnight.getUTCDate() !== day) return undefined; // 31 Feb and the like
  return Date.UTC(year, month, day, h, m, s);
}
