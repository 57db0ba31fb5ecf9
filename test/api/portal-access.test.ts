import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely */

/** The routes a portal token may use: its application's endpoints, messages, events, DLQ and replays. */
const APPLICATION_SCOPED = new Set([
  'listEndpoints',
  'createEndpoint',
  'getEndpoint',
  'updateEndpoint',
  'deleteEndpoint',
  'getEndpointFifoState',
  'getEndpointSecret',
  'rotateEndpointSecret',
  'getEndpointStats',
  'testEndpoint',
  'testEndpointFilter',
  'replayMessage',
  'replayFailedMessages',
  'listMessages',
  'getMessage',
  'listDlq',
  'retryDlqEntry',
  'getPortalSession',
  // Its application's events, replay-failed across its endpoints, statistics, polling.
  'listEvents',
  'getEvent',
  'replayApplicationFailedMessages',
  'getApplicationStats',
  'pollEndpoint',
  // The organization's event type catalog, read only.
  'listEventTypes',
  'getEventType',
]);

interface Route {
  method: string;
  path: string;
  operationId: string;
}

/** Every authenticated route of the OpenAPI document, changes last and deletes at the very end. */
function documentedRoutes(): Route[] {
  const document = JSON.parse(
    readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'),
  );
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(operations)) {
      if (!operation.security || operation.security.length === 0) continue;
      routes.push({ method: method.toUpperCase(), path, operationId: operation.operationId });
    }
  }
  const rank = (route: Route) => (route.method === 'GET' ? 0 : route.method === 'DELETE' ? 2 : 1);
  return routes.sort((a, b) => rank(a) - rank(b));
}

/**
 * Portal tokens: scoped to one application, hashed, expiring, revocable, perhaps read-only. A
 * token for A answers on exactly the application-scoped routes, only for A's ids.
 */
describe('portal access', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    // Deliveries to /gone are refused for good: their messages reach the DLQ at once.
    receiver.respondWith((request) =>
      request.path.endsWith('/gone') ? { status: 410, body: 'gone' } : { status: 200, body: 'ok' },
    );
    stack = await startStack();
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  /** An organization with applications A and B, each with an endpoint that dead-letters, and one of its own. */
  async function world() {
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${tenant.organizationId}`;
    const appA = (await tenant.client.post(`${org}/applications`, { name: 'A', uid: 'cust-a' }))
      .body.data;
    const appB = (await tenant.client.post(`${org}/applications`, { name: 'B', uid: 'cust-b' }))
      .body.data;
    const endpoint = async (applicationId: string | undefined, path: string) =>
      (
        await tenant.client.post(`${org}/webhook-endpoints`, {
          url: `${receiverUrl}/${tenant.organizationId}/${path}`,
          ...(applicationId ? { applicationId } : {}),
        })
      ).body.data;
    // The catalog a portal may read (`{name}` in the walk below).
    await tenant.client.post(`${org}/event-types`, { name: 'order.created' });
    const endpointA = await endpoint(appA.id, 'a/gone');
    const endpointB = await endpoint(appB.id, 'b/gone');
    const endpointOrg = await endpoint(undefined, 'org');
    const ids = async (applicationId: string, endpointId: string) => {
      const event = await tenant.client.post('/v1/events', {
        eventType: 'portal.test',
        payload: {},
        applicationId,
      });
      expect(event.status).toBe(202);
      const entry = await pollUntil(
        async () => (await tenant.client.get(`${org}/dlq?endpointId=${endpointId}`)).body.data[0],
        { description: `a DLQ entry of ${endpointId}` },
      );
      return {
        orgId: tenant.organizationId,
        appId: applicationId,
        endpointId,
        messageId: entry.messageId as string,
        dlqId: entry.id as string,
        eventId: event.body.data.id as string,
        keyId: 'key_00000000000000000000000000',
        name: 'order.created',
      };
    };
    // An event of the organization's own: a portal never sees it.
    const orgEvent = await tenant.client.post('/v1/events', {
      eventType: 'portal.test',
      payload: {},
    });
    const orgEventId = orgEvent.body.data.id as string;
    await pollUntil(
      async () => (await tenant.client.get(`${org}/events/${orgEventId}`)).status === 200,
      { description: "the organization's own event recorded" },
    );
    return {
      ...tenant,
      org,
      orgEventId,
      appA,
      appB,
      endpointA,
      endpointB,
      endpointOrg,
      idsOfA: await ids(appA.id, endpointA.id),
      idsOfB: await ids(appB.id, endpointB.id),
    };
  }

  async function portalToken(
    client: ApiClient,
    org: string,
    appId: string,
    body: object = {},
  ): Promise<{ token: string; url: string; expiresAt: string }> {
    const response = await client.post(`${org}/applications/${appId}/portal-access`, body);
    expect(response.status).toBe(201);
    return response.body.data;
  }

  const bodyFor = (route: Route) =>
    route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
  const fill = (path: string, ids: Record<string, string>) =>
    path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (!(name in ids)) throw new Error(`no id for {${name}}`);
      return ids[name];
    });

  it("answers on exactly the application-scoped routes of the document, and only for A's ids", async () => {
    const w = await world();
    const { token, url, expiresAt } = await portalToken(w.client, w.org, 'cust-a');
    expect(token).toMatch(/^hbp_[A-Za-z0-9_-]{43}$/);
    expect(url).toBe(`${stack.url}/dashboard/portal/${w.organizationId}#token=${token}`);
    const lifetime = Date.parse(expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(3_500_000);
    expect(lifetime).toBeLessThanOrEqual(3_600_000);
    const portal = new ApiClient(stack.url, token);
    const routes = documentedRoutes();
    expect(routes.filter((r) => APPLICATION_SCOPED.has(r.operationId))).toHaveLength(
      APPLICATION_SCOPED.size,
    );

    // B's ids: nothing answers (and nothing of B changes).
    for (const route of routes) {
      const response = await portal.request(
        route.method,
        fill(route.path, w.idsOfB),
        bodyFor(route),
      );
      const scopedList =
        APPLICATION_SCOPED.has(route.operationId) &&
        !/\{(endpointId|messageId|dlqId|eventId|appId)\}/.test(route.path);
      if (scopedList) continue; // lists and create take no id of B: checked below
      expect({ route: route.operationId, status: response.status }).toEqual({
        route: route.operationId,
        status: 404,
      });
    }
    expect((await w.client.get(`${w.org}/webhook-endpoints/${w.endpointB.id}`)).status).toBe(200);

    // Lists show A's only; naming B, or the organization's own endpoint, is not found.
    const endpoints = await portal.get(`${w.org}/webhook-endpoints`);
    expect(endpoints.body.data.map((e: any) => e.id)).toEqual([w.endpointA.id]);
    expect((await portal.get(`${w.org}/webhook-endpoints?applicationId=cust-b`)).status).toBe(404);
    expect((await portal.get(`${w.org}/webhook-endpoints/${w.endpointOrg.id}`)).status).toBe(404);
    const messages = await portal.get(`${w.org}/messages`);
    expect(messages.body.data.map((m: any) => m.endpointId)).toEqual([w.endpointA.id]);
    expect((await portal.get(`${w.org}/messages?applicationId=${w.appB.id}`)).status).toBe(404);
    const dlq = await portal.get(`${w.org}/dlq`);
    expect(dlq.body.data.map((d: any) => d.id)).toEqual([w.idsOfA.dlqId]);
    const events = await portal.get(`${w.org}/events`);
    expect(events.body.data.map((e: any) => e.id)).toEqual([w.idsOfA.eventId]);
    expect((await portal.get(`${w.org}/events?applicationId=cust-b`)).status).toBe(404);
    expect((await portal.get(`${w.org}/events/${w.orgEventId}`)).status).toBe(404);
    expect((await w.client.get(`${w.org}/events/${w.orgEventId}`)).status).toBe(200);
    // Another organization: not found.
    const other = await createTenant(stack.url, stack.adminToken);
    expect(
      (await portal.get(`/api/organizations/${other.organizationId}/webhook-endpoints`)).status,
    ).toBe(404);

    // A's ids: exactly the application-scoped routes answer.
    const answered: string[] = [];
    const wrong: { route: string; status: number }[] = [];
    for (const route of routes) {
      const response = await portal.request(
        route.method,
        fill(route.path, w.idsOfA),
        bodyFor(route),
      );
      const scoped = APPLICATION_SCOPED.has(route.operationId);
      const refused = [401, 403, 404, 500].includes(response.status);
      if (scoped && !refused) answered.push(route.operationId);
      if (scoped === refused || (!scoped && response.status !== 404))
        wrong.push({ route: route.operationId, status: response.status });
    }
    expect(wrong).toEqual([]);
    expect(new Set(answered)).toEqual(APPLICATION_SCOPED);

    // An endpoint the portal creates belongs to A, whatever it says.
    const created = await portal.post(`${w.org}/webhook-endpoints`, {
      url: `${receiverUrl}/portal-made`,
      fifoEnabled: true,
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ applicationId: w.appA.id, fifoEnabled: true });
    expect(
      (
        await portal.post(`${w.org}/webhook-endpoints`, {
          url: `${receiverUrl}/x`,
          applicationId: w.appB.id,
        })
      ).status,
    ).toBe(404);
  });

  it("polls its own application's polling endpoints only, and a read-only token may not", async () => {
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${tenant.organizationId}`;
    const appA = (await tenant.client.post(`${org}/applications`, { name: 'A' })).body.data;
    const appB = (await tenant.client.post(`${org}/applications`, { name: 'B' })).body.data;
    const polling = async (applicationId?: string) =>
      (
        await tenant.client.post(`${org}/webhook-endpoints`, {
          kind: 'polling',
          ...(applicationId ? { applicationId } : {}),
        })
      ).body.data.id as string;
    const ofA = await polling(appA.id);
    const ofB = await polling(appB.id);
    const ofOrg = await polling();
    for (const applicationId of [appA.id, appB.id, undefined]) {
      const published = await tenant.client.post('/v1/events', {
        eventType: 'poll.me',
        payload: { for: applicationId ?? 'org' },
        ...(applicationId ? { applicationId } : {}),
      });
      expect(published.status).toBe(202);
    }
    const pending = async (endpointId: string) =>
      (await tenant.client.get(`${org}/messages?endpointId=${endpointId}`)).body.data.map(
        (m: any) => m.status,
      );
    for (const endpointId of [ofA, ofB, ofOrg]) {
      await pollUntil(async () => (await pending(endpointId)).length === 1, {
        description: `a message in ${endpointId}'s log`,
      });
    }

    // Read-only: polling acknowledges, so it is a change: refused, and nothing is acknowledged.
    const readOnly = new ApiClient(
      stack.url,
      (await portalToken(tenant.client, org, appA.id, { readOnly: true })).token,
    );
    const refused = await readOnly.get(`${org}/webhook-endpoints/${ofA}/poll`);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(await pending(ofA)).toEqual(['pending']);

    const portal = new ApiClient(stack.url, (await portalToken(tenant.client, org, appA.id)).token);
    const page = await portal.get(`${org}/webhook-endpoints/${ofA}/poll`);
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual([
      expect.objectContaining({ eventType: 'poll.me', payload: { for: appA.id } }),
    ]);
    // Polling past it acknowledges it.
    const next = await portal.get(
      `${org}/webhook-endpoints/${ofA}/poll?cursor=${page.body.nextCursor}`,
    );
    expect(next.status).toBe(200);
    expect(next.body.data).toEqual([]);
    expect(await pending(ofA)).toEqual(['succeeded']);

    // Another application's polling endpoint, or the organization's own: not found, untouched.
    for (const endpointId of [ofB, ofOrg]) {
      const other = await portal.get(`${org}/webhook-endpoints/${endpointId}/poll`);
      expect(other.status).toBe(404);
      expect(other.body.error.code).toBe('ENDPOINT_NOT_FOUND');
      expect(await pending(endpointId)).toEqual(['pending']);
    }
    expect((await tenant.client.get(`${org}/webhook-endpoints/${ofB}/poll`)).status).toBe(200);
  });

  it('keeps the plan rules: the FIFO switch needs the plan', async () => {
    const tenant = await createTenant(stack.url, stack.adminToken, 'free');
    const org = `/api/organizations/${tenant.organizationId}`;
    const app = (await tenant.client.post(`${org}/applications`, { name: 'A' })).body.data;
    const { token } = await portalToken(tenant.client, org, app.id);
    const refused = await new ApiClient(stack.url, token).post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/fifo`,
      fifoEnabled: true,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('PLAN_REQUIRED');
  });

  it('a read-only token reads and changes nothing', async () => {
    const w = await world();
    const { token } = await portalToken(w.client, w.org, w.appA.id, { readOnly: true });
    const portal = new ApiClient(stack.url, token);
    expect((await portal.get(`${w.org}/webhook-endpoints/${w.endpointA.id}`)).status).toBe(200);
    expect((await portal.get(`${w.org}/messages/${w.idsOfA.messageId}`)).status).toBe(200);
    const before = (await w.client.get(`${w.org}/webhook-endpoints/${w.endpointA.id}`)).body.data;
    const attempts = [
      await portal.post(`${w.org}/webhook-endpoints`, { url: `${receiverUrl}/ro` }),
      await portal.patch(`${w.org}/webhook-endpoints/${w.endpointA.id}`, { status: 'paused' }),
      await portal.post(`${w.org}/webhook-endpoints/${w.endpointA.id}/secret/rotate`, {}),
      await portal.post(`${w.org}/messages/${w.idsOfA.messageId}/replay`, {}),
      await portal.post(`${w.org}/dlq/${w.idsOfA.dlqId}/retry`, {}),
      await portal.post(`${w.org}/applications/${w.appA.id}/replay-failed`, {}),
      await portal.delete(`${w.org}/webhook-endpoints/${w.endpointA.id}`),
    ];
    expect(attempts.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403]);
    // It reads its application's events and statistics.
    expect((await portal.get(`${w.org}/events/${w.idsOfA.eventId}`)).status).toBe(200);
    expect((await portal.get(`${w.org}/applications/cust-a/stats`)).body.data).toMatchObject({
      endpoints: 1,
    });
    expect((await w.client.get(`${w.org}/webhook-endpoints/${w.endpointA.id}`)).body.data).toEqual(
      before,
    );
    expect(
      (await w.client.get(`${w.org}/webhook-endpoints?applicationId=cust-a`)).body.data,
    ).toHaveLength(1);
    expect((await w.client.get(`${w.org}/messages?applicationId=cust-a`)).body.data).toHaveLength(
      1,
    );
  });

  it('an expired or revoked token gets 401; the admin token may open a portal too', async () => {
    const w = await world();
    const short = await portalToken(w.client, w.org, w.appA.id, { expiresInSeconds: 1 });
    const expired = new ApiClient(stack.url, short.token);
    await pollUntil(async () => (await expired.get(`${w.org}/webhook-endpoints`)).status === 401, {
      description: 'the one-second token refused once expired',
    });

    const admin = new ApiClient(stack.url, stack.adminToken);
    const first = await portalToken(admin, w.org, 'cust-a');
    const second = await portalToken(w.client, w.org, 'cust-a');
    const ofB = await portalToken(w.client, w.org, 'cust-b');
    for (const { token } of [first, second, ofB]) {
      expect((await new ApiClient(stack.url, token).get(`${w.org}/webhook-endpoints`)).status).toBe(
        200,
      );
    }
    // A portal token cannot open portals itself.
    expect(
      (
        await new ApiClient(stack.url, second.token).post(
          `${w.org}/applications/cust-a/portal-access`,
          {},
        )
      ).status,
    ).toBe(404);
    const revoked = await w.client.delete(`${w.org}/applications/cust-a/portal-access`);
    expect(revoked.body.data).toEqual({ applicationId: w.appA.id, revoked: 2 });
    for (const { token } of [first, second]) {
      const response = await new ApiClient(stack.url, token).get(`${w.org}/webhook-endpoints`);
      expect(response.status).toBe(401);
    }
    // B's token is untouched.
    expect(
      (await new ApiClient(stack.url, ofB.token).get(`${w.org}/webhook-endpoints`)).status,
    ).toBe(200);
    expect((await w.client.post(`${w.org}/applications/nobody/portal-access`, {})).status).toBe(
      404,
    );
    expect(
      (
        await w.client.post(`${w.org}/applications/cust-a/portal-access`, {
          expiresInSeconds: 8 * 86400,
        })
      ).status,
    ).toBe(400);
  });
});
