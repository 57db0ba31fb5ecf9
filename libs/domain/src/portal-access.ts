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
 * else is 404, so the token learns nothing of what lies outside), and a read-only token only reads:
 * it is refused every change, including a read that changes something (`readChanges`: polling,
 * which acknowledges what it moves past).
 */
export function portalDecision(
  route: { applicationScoped: boolean; readChanges?: boolean },
  method: string,
  readOnly: boolean,
): PortalDecision {
  if (!route.applicationScoped) return 'not_found';
  const changes = route.readChanges === true || !READING_METHODS.has(method.toUpperCase());
  if (readOnly && changes) return 'read_only';
  return 'allow';
}

/**
 * The portal's address for a token: the token rides in the fragment, which browsers never send,
 * so it reaches no server or proxy log; the page moves it to session storage at once. The
 * organization id in the path (no secret) lets the server send that organization's
 * `frame-ancestors` with every portal page.
 */
export function portalUrl(publicBaseUrl: string, organizationId: string, token: string): string {
  const base = publicBaseUrl.replace(/\/+$/, '');
  return `${base}/dashboard/portal/${encodeURIComponent(organizationId)}#token=${encodeURIComponent(token)}`;
}

/** An origin allowed to embed the portal: scheme, host and optional port, nothing more. */
const ORIGIN_PATTERN = /^https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?$/;

/** An organization's portal branding and the origins that may embed its portal in a frame. */
export const portalSettingsSchema = z
  .strictObject({
    displayName: z.string().trim().min(1).max(100).optional(),
    /** An https (or http) image URL shown in the portal's header. */
    logoUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    /** A hex colour such as #3366ff. */
    primaryColor: z
      .string()
      .regex(/^#[0-9A-Fa-f]{6}$/, 'must be a hex colour such as #3366ff')
      .optional(),
    /** Origins such as https://app.example.com; none: the portal cannot be framed. */
    allowedOrigins: z
      .array(z.string().regex(ORIGIN_PATTERN, 'must be an origin such as https://app.example.com'))
      .max(20)
      .optional(),
  })
  .nullable();
export type PortalSettings = NonNullable<z.infer<typeof portalSettingsSchema>>;

/** The `frame-ancestors` of an organization's portal pages: its allowed origins, else none. */
export function portalFrameAncestors(settings: PortalSettings | null | undefined): string {
  const origins = settings?.allowedOrigins ?? [];
  return origins.length === 0 ? "frame-ancestors 'none'" : `frame-ancestors ${origins.join(' ')}`;
}
