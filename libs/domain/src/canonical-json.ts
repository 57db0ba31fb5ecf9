import { hash } from 'node:crypto';

/** JSON with object keys sorted, so equal values give equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map(
      (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
    );
  return `{${entries.join(',')}}`;
}

/** Fingerprint of what an idempotency key promises: the same type and the same payload. */
export function eventFingerprint(
  eventType: string,
  payload: unknown,
  applicationId?: string,
): string {
  // The application joins the fingerprint only when named: fingerprints stored before
  // applications existed stay valid for events of none.
  const fields =
    applicationId === undefined ? { eventType, payload } : { eventType, payload, applicationId };
  return hash('sha256', canonicalJson(fields), 'hex');
}
