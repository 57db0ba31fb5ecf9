/**
 * Limits on the shape of JSON Hookbase accepts, checked on the text before it is parsed (REST
 * bodies and gRPC payload_json alike):
 *
 * - nesting: at most MAX_JSON_DEPTH levels of arrays and objects. Deeper documents are refused;
 *   nothing Hookbase stores or delivers needs more, and the code that walks them (validation,
 *   storage in PostgreSQL's jsonb, canonical forms) stays far from any stack limit.
 * - numbers: every number must survive the trip through JSON.parse unchanged in meaning. An
 *   integer written without fraction or exponent must lie within ±(2^53 − 1) (beyond it, digits
 *   are silently lost: 12345678901234567891 would be delivered as 12345678901234567000), and no
 *   number may overflow to infinity (1e400 would become null). Send such values as strings.
 *   Fractions and exponents within range are taken as doubles, as JSON does.
 *
 * A pure scan, linear in the text; it never throws and returns the first problem found.
 */
export const MAX_JSON_DEPTH = 64;

export interface JsonShapeProblem {
  message: string;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;

const isDigit = (code: number) => code >= 0x30 && code <= 0x39;
// Characters a JSON number may be made of after its first.
const isNumberPart = (code: number) =>
  isDigit(code) ||
  code === 0x2e ||
  code === 0x65 ||
  code === 0x45 ||
  code === 0x2b ||
  code === MINUS;

const UTF8 = new TextDecoder();
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** UTF-8 bytes or a string: the structural characters of JSON are ASCII in both. */
export function jsonShapeProblem(
  text: string | Uint8Array,
  maxDepth: number = MAX_JSON_DEPTH,
): JsonShapeProblem | null {
  // A loop of its own for each kind, rather than a branch or a call per character: the scan runs
  // over every request body and every gRPC payload.
  return typeof text === 'string' ? scanText(text, maxDepth) : scanBytes(text, maxDepth);
}

function scanText(chars: string, maxDepth: number): JsonShapeProblem | null {
  const length = chars.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const code = chars.charCodeAt(i);
    if (code === QUOTE) {
      i = stringEnd(chars, i);
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > maxDepth) return tooDeep(maxDepth);
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    } else if (code === MINUS || isDigit(code)) {
      const end = numberEnd(chars, i + 1);
      const problem = numberAt(chars, i, end);
      if (problem) return problem;
      i = end - 1;
    }
  }
  return null;
}

/**
 * Where the string opened at `open` closes (the text's length when it does not): the search for
 * a quote is native, and a quote counts when an even number of backslashes precede it.
 */
function stringEnd(chars: string, open: number): number {
  for (let from = open + 1; ;) {
    const quote = chars.indexOf('"', from);
    if (quote === -1) return chars.length;
    let before = quote - 1;
    while (chars.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
    from = quote + 1;
  }
}

function scanBytes(bytes: Uint8Array, maxDepth: number): JsonShapeProblem | null {
  const length = bytes.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const code = bytes[i];
    if (code === QUOTE) {
      // Skip the string, escapes included.
      for (i++; i < length; i++) {
        const inner = bytes[i];
        if (inner === BACKSLASH) i++;
        else if (inner === QUOTE) break;
      }
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > maxDepth) return tooDeep(maxDepth);
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    } else if (code === MINUS || isDigit(code)) {
      const end = numberEnd(bytes, i + 1);
      const problem = numberAt(bytes, i, end);
      if (problem) return problem;
      i = end - 1;
    }
  }
  return null;
}

function tooDeep(maxDepth: number): JsonShapeProblem {
  return { message: `JSON is nested deeper than ${maxDepth} levels` };
}

/** Where the number token going on at `from` ends. */
function numberEnd(text: string | Uint8Array, from: number): number {
  let end = from;
  while (end < text.length && isNumberPart(codeAt(text, end))) end++;
  return end;
}

function codeAt(text: string | Uint8Array, index: number): number {
  return typeof text === 'string' ? text.charCodeAt(index) : text[index];
}

/**
 * The problem of the number token from `start` to `end`, if any. An integer of up to 15 digits is
 * always exact, and a number without an exponent needs over 300 digits to overflow: only the rest
 * are read as text and checked.
 */
function numberAt(text: string | Uint8Array, start: number, end: number): JsonShapeProblem | null {
  const negative = codeAt(text, start) === MINUS;
  let plain = true; // digits only, after an optional minus
  for (let i = negative ? start + 1 : start; i < end && plain; i++)
    plain = isDigit(codeAt(text, i));
  const digits = negative ? end - start - 1 : end - start;
  if (plain && digits <= 15) return null;
  if (!plain && end - start < 300 && !hasExponent(text, start, end)) return null;
  return numberProblem(sliceText(text, start, end));
}

function hasExponent(text: string | Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const code = codeAt(text, i);
    if (code === 0x65 || code === 0x45) return true;
  }
  return false;
}

function sliceText(text: string | Uint8Array, start: number, end: number): string {
  return typeof text === 'string' ? text.slice(start, end) : UTF8.decode(text.subarray(start, end));
}

function numberProblem(token: string): JsonShapeProblem | null {
  if (/^-?\d+$/.test(token)) {
    // Up to 15 digits is always safe, 17 or more never (JSON has no leading zeros); 16 are
    // compared exactly.
    const digits = token.startsWith('-') ? token.length - 1 : token.length;
    const unsafe =
      digits > 16 || (digits === 16 && (BigInt(token) > MAX_SAFE || BigInt(token) < -MAX_SAFE));
    if (unsafe) {
      return {
        message: `the integer ${shorten(token)} is beyond ±${Number.MAX_SAFE_INTEGER} and would lose digits: send it as a string`,
      };
    }
    return null;
  }
  const value = Number(token);
  if (Number.isNaN(value)) return null; // not a number at all: JSON.parse says why
  if (!Number.isFinite(value)) {
    return { message: `the number ${shorten(token)} is out of range: send it as a string` };
  }
  return null;
}

function shorten(token: string): string {
  return token.length > 40 ? `${token.slice(0, 37)}...` : token;
}
