import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { portalFrameAncestors, PortalSettings } from '@hookbase/domain';

/** Where `npm run build` puts the dashboard: dist/dashboard, beside dist/libs. */
export const DEFAULT_DASHBOARD_DIR = join(__dirname, '..', '..', '..', 'dashboard');

export const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** The page may load and call only this origin; nothing may frame it. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * The policy of a portal page (`/dashboard/portal/<orgId>/…`): the dashboard's, but framed only by
 * the organization's allowed origins, and its logo's origin allowed as an image source.
 */
export function portalPageCsp(settings: PortalSettings | null): string {
  let logoOrigin: string | null = null;
  try {
    logoOrigin = settings?.logoUrl ? new URL(settings.logoUrl).origin : null;
  } catch {
    logoOrigin = null;
  }
  return DASHBOARD_CSP.replace("frame-ancestors 'none'", portalFrameAncestors(settings)).replace(
    "img-src 'self' data:",
    `img-src 'self' data:${logoOrigin ? ` ${logoOrigin}` : ''}`,
  );
}

/** The organization a portal page path names (`portal/<orgId>/…`), or null for any other page. */
export function portalOrganizationOf(path: string): string | null {
  const match = /^portal\/(org_[0-9a-z]{26})(?:\/|$)/.exec(path);
  return match ? match[1] : null;
}

/** Where serveDashboard reads an organization's portal settings. */
export type PortalSettingsLookup = (organizationId: string) => Promise<PortalSettings | null>;

/**
 * What a request under /dashboard/ is answered with: a built file, index.html for a client route
 * (the SPA's own router reads the path), or nothing (a missing asset, or a path escaping the folder).
 * Hashed assets are cached for a year; index.html is revalidated on every visit.
 */
export function dashboardFileFor(
  dir: string,
  requested: string,
): { file: string; cacheControl: string } | null {
  const path = normalize(decodeURIComponent(requested)).replace(/^([/\\])+/, '');
  if (path.startsWith('..') || path.includes(`${sep}..${sep}`)) return null;
  const index = { file: join(dir, 'index.html'), cacheControl: 'no-cache' };
  if (path === '' || path === '.') return index;
  const file = join(dir, path);
  if (!file.startsWith(dir + sep)) return null;
  if (existsSync(file) && statSync(file).isFile()) {
    return {
      file,
      cacheControl: path.startsWith(`assets${sep}`)
        ? 'public, max-age=31536000, immutable'
        : 'no-cache',
    };
  }
  // A file name that is not there is a missing asset (404); anything else is a client route.
  if (path.startsWith(`assets${sep}`) || extname(path) !== '') return null;
  return index;
}

function notFound(reply: FastifyReply, message: string) {
  return reply
    .code(404)
    .header('content-type', 'application/json; charset=utf-8')
    .send({ error: { code: 'NOT_FOUND', message } });
}

/** Serves the built dashboard at /dashboard/ on this Fastify instance. */
export function serveDashboard(
  fastify: FastifyInstance,
  dir = DEFAULT_DASHBOARD_DIR,
  portalSettings: PortalSettingsLookup = () => Promise.resolve(null),
): void {
  fastify.get('/dashboard', (_request, reply) => reply.redirect('/dashboard/', 302));
  fastify.get('/dashboard/*', async (request, reply) => {
    if (!existsSync(join(dir, 'index.html'))) {
      return notFound(reply, 'The dashboard is not built: run `npm run build` (or `npm start`).');
    }
    const requested = (request.params as { '*': string })['*'] ?? '';
    let found: ReturnType<typeof dashboardFileFor>;
    try {
      found = dashboardFileFor(dir, requested);
    } catch {
      found = null;
    }
    if (!found) return notFound(reply, 'No such dashboard file');
    const body = await readFile(found.file);
    const organizationId = portalOrganizationOf(requested);
    const csp = organizationId
      ? portalPageCsp(await portalSettings(organizationId))
      : DASHBOARD_CSP;
    return reply
      .header('content-type', CONTENT_TYPES[extname(found.file)] ?? 'application/octet-stream')
      .header('cache-control', found.cacheControl)
      .header('content-security-policy', csp)
      .header('referrer-policy', 'no-referrer')
      .send(body);
  });
}
