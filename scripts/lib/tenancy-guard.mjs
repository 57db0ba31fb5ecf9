// The API fuzz's check that no tenant reaches another's data (scripts/fuzz.mjs). A proxy between
// schemathesis and Hookbase sees every request and its answer; an answer in 2xx to one tenant's
// API key whose path or body names an identifier of another tenant's data is a cross-tenant read
// (or write), reported with the request that made it.
import { createServer, request as httpRequest } from 'node:http';

/**
 * The identifier of another tenant's data that a request and its answer show, or null.
 * `tenants`: [{ name, key, ids: string[] }]; a request with no tenant's key (the admin token, or
 * a generated one) is not judged.
 */
export function foreignIdIn(tenants, { authorization, path, status, body }) {
  if (status < 200 || status >= 300) return null;
  const token = /^Bearer\s+(\S+)/i.exec(authorization ?? '')?.[1];
  const caller = tenants.find((tenant) => tenant.key === token);
  if (!caller) return null;
  for (const tenant of tenants) {
    if (tenant === caller) continue;
    for (const id of tenant.ids) {
      if (path.includes(id) || body.includes(id)) return { tenant: tenant.name, id };
    }
  }
  return null;
}

/**
 * An HTTP proxy on 127.0.0.1 (a free port) in front of `target`, judging each answer with
 * foreignIdIn. `violations` lists what it found, `counts` what it saw; `close()` stops it.
 */
export async function startTenancyGuard(target, tenants) {
  const violations = [];
  const counts = { answers: 0, byTenantKeys: 0 };
  const upstream = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const chunks = [];
    incoming.on('data', (chunk) => chunks.push(chunk));
    incoming.on('end', () => {
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.headers,
        },
        (answer) => {
          const parts = [];
          answer.on('data', (chunk) => parts.push(chunk));
          answer.on('end', () => {
            const body = Buffer.concat(parts);
            counts.answers++;
            const token = /^Bearer\s+(\S+)/i.exec(incoming.headers.authorization ?? '')?.[1];
            if (tenants.some((tenant) => tenant.key === token)) counts.byTenantKeys++;
            const found = foreignIdIn(tenants, {
              authorization: incoming.headers.authorization,
              path: incoming.url ?? '',
              status: answer.statusCode ?? 0,
              body: body.toString('utf8'),
            });
            if (found) {
              violations.push({
                method: incoming.method,
                path: incoming.url,
                status: answer.statusCode,
                ...found,
              });
            }
            const headers = { ...answer.headers };
            delete headers['transfer-encoding'];
            headers['content-length'] = String(body.length);
            outgoing.writeHead(answer.statusCode ?? 502, headers);
            outgoing.end(body);
          });
        },
      );
      forward.on('error', (error) => {
        outgoing.writeHead(502, { 'content-type': 'text/plain' });
        outgoing.end(`tenancy guard: ${error.message}`);
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    violations,
    /** How many answers passed through, and how many of them to a tenant's key. */
    counts,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}
