import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// The module is plain ESM run by node (scripts/*.mjs), so it is exercised in a node process of
// its own, as the fuzz uses it.
const moduleUrl = pathToFileURL(join(__dirname, 'tenancy-guard.mjs')).href;

function runInNode(body: string): unknown {
  const program = `import * as guard from ${JSON.stringify(moduleUrl)};\n${body}`;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', program]).toString(),
  );
}

const TENANTS = JSON.stringify([
  { name: 'a', key: 'hb_keyA', ids: ['org_a', 'ep_a'] },
  { name: 'b', key: 'hb_keyB', ids: ['org_b', 'ep_b'] },
]);

function judge(answer: {
  authorization?: string;
  path: string;
  status: number;
  body: string;
}): unknown {
  return runInNode(
    `console.log(JSON.stringify(guard.foreignIdIn(${TENANTS}, ${JSON.stringify(answer)})));`,
  );
}

describe('the fuzz tenancy guard', () => {
  it("finds another tenant's id in a 2xx answer's body or path", () => {
    expect(
      judge({ authorization: 'Bearer hb_keyA', path: '/x', status: 200, body: '{"id":"ep_b"}' }),
    ).toEqual({ tenant: 'b', id: 'ep_b' });
    expect(
      judge({
        authorization: 'Bearer hb_keyA',
        path: '/api/organizations/org_b/x',
        status: 204,
        body: '',
      }),
    ).toEqual({ tenant: 'b', id: 'org_b' });
  });

  it("passes a tenant's own data, refusals, and callers that are no tenant", () => {
    expect(
      judge({
        authorization: 'Bearer hb_keyA',
        path: '/api/organizations/org_a',
        status: 200,
        body: '{"id":"ep_a"}',
      }),
    ).toBeNull();
    expect(
      judge({
        authorization: 'Bearer hb_keyA',
        path: '/api/organizations/org_b',
        status: 404,
        body: '{}',
      }),
    ).toBeNull();
    expect(
      judge({ authorization: 'Bearer admin', path: '/org_b', status: 200, body: 'ep_a' }),
    ).toBeNull();
    expect(judge({ path: '/org_b', status: 200, body: '' })).toBeNull();
  });

  it('proxies requests unchanged and records what it finds', () => {
    const result = runInNode(`
      import { createServer } from 'node:http';
      const upstream = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          res.writeHead(req.url === '/leak' ? 200 : 404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, url: req.url, body, id: 'ep_b' }));
        });
      });
      await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
      const proxy = await guard.startTenancyGuard(
        'http://127.0.0.1:' + upstream.address().port,
        ${TENANTS},
      );
      const headers = { authorization: 'Bearer hb_keyA', 'content-type': 'application/json' };
      const leak = await fetch(proxy.url + '/leak', { method: 'POST', headers, body: '{"n":1}' });
      const echoed = await leak.json();
      const other = await fetch(proxy.url + '/other', { headers });
      await proxy.close();
      upstream.close();
      console.log(JSON.stringify({ status: leak.status, echoed, other: other.status, violations: proxy.violations, counts: proxy.counts }));
    `);
    expect(result).toEqual({
      status: 200,
      echoed: { method: 'POST', url: '/leak', body: '{"n":1}', id: 'ep_b' },
      other: 404,
      violations: [{ method: 'POST', path: '/leak', status: 200, tenant: 'b', id: 'ep_b' }],
      counts: { answers: 2, byTenantKeys: 2 },
    });
  });
});
