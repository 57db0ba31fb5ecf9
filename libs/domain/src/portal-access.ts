import { z } from 'zod';

/**
 * Portal access: a short-lived bearer token scoped to one application, for the producer's
 * customer to manage that application's endpoints in the dashboard's portal mode (ADR 0032).
 */

/** `hbp_` and 32 random bytes in base64url (43 characters): every portal token Hookbase issues. */
export const PORTAL_TOKEN_PATTERN = /^hbp_[A-Za-z0-9_-]{43}$/;
export const PORTAL_TOKEN_LENGTH = 47;
export const PORTAL_TOKEN_DEFAULT_SECONDS = 3600;
export const PORTAL_TOKEN_MAX_SECONDS = 7 * 24 * 3600;

/** Whether a bearer string can be a portal token Hookbase issued: only such strings are looked up. */
export function isWellFormedPortalToken(token: string): boolean {
  return token.length === PORTAL_TOKEN_LENGTH && PORTAL_TOKEN_PATTERN.test(token);
}

export const portalAccessSchema = z.strictObject({
  /** How long the token works: one hour unless said, at most seven days. */
  expiresInSeconds: z
    .number()
    .int()
    .min(1)
    .max(PORTAL_TOKEN_MAX_SECONDS)
    .default(PORTAL_TOKEN_DEFAULT_SECONDS),
  /** A read-only token may look but change nothing. */
  readOnly: z.boolean().default(false),
});
export type PortalAccessInput = z.infer<typeof portalAccessSchema>;

/** What a portal token may do on a route. */
export type PortalDecision =
  /** An application-scoped route: it answers, for the token's application only. */
  | 'allow'
  /** Anything else: answered as if the route did not exist. */
  | 'not_found'
  /** A change through a read-only token. */
  | 'read_only';

const READING_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The scope rule of a portal token: only routes marked application-scoped answer (everything
 * else is 404, so the token learns nothing of what lies outside), and a read-only token only reads.
 */
export function portalDecision(
  route: { applicationScoped: boolean },
  method: string,
  readOnly: boolean,
): PortalDecision {
  if (!route.applicationScoped) return 'not_found';
  if (readOnly && !READING_METHODS.has(method.toUpperCase())) return 'read_only';
  return 'allow';
}

/**
 * The portal's address for a token: the token rides in the fragment, which browsers never send,
 * so it reaches no server or proxy log; the page moves it to session storage at once.
 */
export function portalUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/dashboard/portal#token=${encodeURIComponent(token)}`;
}
