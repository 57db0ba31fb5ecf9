import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONTENT_TYPES } from './dashboard-files';

/** Where `npm run build` puts the documentation site (VitePress): dist/docs, beside dist/libs. */
export const DEFAULT_DOCS_DIR = join(__dirname, '..', '..', '..', 'docs');

/**
 * The documentation may load and call only this origin (its pages, the API reference's
 * renderer, and /openapi.json); nothing may frame it. The generated pages carry small inline
 * scripts (the colour scheme, the page hash map) and the API reference renderer writes its
 * styles inline and runs its search in a worker from a blob.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

/**
 * What a request under /docs/ is answered with: a built file (a page asked for without its
 * `.html`, or a folder's index.html, found too), or the site's 404 page. Hashed assets are cached
 * for a year; pages are revalidated on every visit. A path escaping the folder is not found.
 */
export function docsFileFor(
  dir: string,
  requested: string,
): { file: string; cacheControl: string; status: 200 | 404 } {
  const notFound = { file: join(dir, '404.html'), cacheControl: 'no-cache', status: 404 as const };
  const path = normalize(decodeURIComponent(requested)).replace(/^([/\\])+/, '');
  if (path.startsWith('..') || path.includes(`${sep}..${sep}`)) return notFound;
  const candidates =
    path === '' || path === '.'
      ? ['index.html']
      : [path, `${path}.html`, join(path, 'index.html')].filter(Boolean);
  for (const candidate of candidates) {
    const file = join(dir, candidate);
    if (!file.startsWith(dir + sep)) return notFound;
    if (existsSync(file) && statSync(file).isFile()) {
      const immutable = candidate.startsWith(`assets${sep}`);
      return {
        file,
        cacheControl: immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        status: 200,
      };
    }
  }
  return notFound;
}

/** Serves the built documentation site at /docs/ on this Fastify instance. */
export function serveDocs(fastify: FastifyInstance, dir = DEFAULT_DOCS_DIR): void {
  const send = async (reply: FastifyReply, requested: string) => {
    if (!existsSync(join(dir, 'index.html'))) {
      return reply
        .code(404)
        .header('content-type', 'application/json; charset=utf-8')
        .send({
          error: {
            code: 'NOT_FOUND',
            message: 'The documentation is not built: run `npm run build` (or `npm start`).',
          },
        });
    }
    let found: ReturnType<typeof docsFileFor>;
    try {
      found = docsFileFor(dir, requested);
    } catch {
      found = docsFileFor(dir, '404.html');
      found.status = 404;
    }
    const body = await readFile(found.file);
    return reply
      .code(found.status)
      .header('content-type', CONTENT_TYPES[extname(found.file)] ?? 'application/octet-stream')
      .header('cache-control', found.cacheControl)
      .header('content-security-policy', DOCS_CSP)
      .header('referrer-policy', 'no-referrer')
      .send(body);
  };
  fastify.get('/docs', (_request, reply) => reply.redirect('/docs/', 302));
  fastify.get('/docs/*', (request, reply) =>
    send(reply, (request.params as { '*': string })['*'] ?? ''),
  );
}
