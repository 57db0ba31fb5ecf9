/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely, asserted by value */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { generateCredentialsKey } from '@hookbase/destinations';
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';
import { makeTlsFixtures, TlsFixtures } from './tls-fixtures';

/**
 * Receivers as they are in companies, against the real stack: custom and sensitive headers, basic,
 * bearer, OAuth2 client credentials (a token server here), mTLS and an endpoint's own CA, the
 * per-endpoint timeout, and the test send. No secret may show in a GET, the message log or the logs.
 */
describe('receiver options on http endpoints', () => {
  const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;
  const sensitiveValue = secret('apikey');
  const password = secret('password');
  const bearerToken = secret('bearer');
  const clientSecret = secret('client-secret');
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let stack: RunningStack;
  let client: ApiClient;
  let base: string;
  let org: string;
  const lines: string[] = [];
  let tls: TlsFixtures;
  const servers: (Server | HttpsServer)[] = [];

  async function listen<S extends Server | HttpsServer>(server: S): Promise<number> {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  beforeAll(async () => {
    tls = makeTlsFixtures();
    receiverUrl = await receiver.start();
    stack = await startStack({
      LOG_LEVEL: 'debug',
      HOOKBASE_CREDENTIALS_KEY: generateCredentialsKey(),
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_DELIVERY_TIMEOUT_MS: '5000',
    });
    stack.process.follow((line) => lines.push(line));
    const tenant = await createTenant(stack.url, stack.adminToken);
    client = tenant.client;
    org = `/api/organizations/${tenant.organizationId}`;
    base = `${org}/webhook-endpoints`;
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const create = async (body: Record<string, unknown>) => {
    const response = await client.post(base, body);
    expect(response.status).toBe(201);
    return response.body.data as Record<string, any>;
  };

  /** Publishes one event to one endpoint and returns the request its receiver saw. */
  const deliverOne = async (endpointId: string, server: TestReceiver = receiver) => {
    const published = await client.post('/v1/events', {
      eventType: 'receiver.test',
      payload: { n: randomBytes(4).toString('hex') },
      endpointIds: [endpointId],
    });
    expect(published.status).toBe(202);
    const messageId = await pollUntil(
      async () => {
        const event = await client.get(`${org}/events/${published.body.data.id}`);
        return event.body.data?.messages?.[0]?.id as string | undefined;
      },
      { description: 'the message of the event' },
    );
    return pollUntil(() => server.requests.find((r) => r.headers['webhook-id'] === messageId), {
      description: `the receiver saw ${messageId}`,
    });
  };

  it('sends custom headers, keeps sensitive values sealed and masked, refuses reserved names', async () => {
    const endpoint = await create({
      url: `${receiverUrl}/headers`,
      headers: [
        { name: 'X-Tenant', value: 'acme' },
        { name: 'x-api-key', value: sensitiveValue, sensitive: true },
      ],
    });
    expect(endpoint.headers).toEqual([
      { name: 'X-Tenant', value: 'acme', sensitive: false },
      { name: 'x-api-key', value: '********', sensitive: true },
    ]);
    expect(endpoint.auth).toBeNull();
    const seen = await deliverOne(endpoint.id);
    expect(seen.headers['x-tenant']).toBe('acme');
    expect(seen.headers['x-api-key']).toBe(sensitiveValue);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['webhook-signature']).toMatch(/^v1,/);

    // A PATCH may leave a stored sensitive value out to keep it.
    const kept = await client.patch(`${base}/${endpoint.id}`, {
      headers: [
        { name: 'x-api-key', sensitive: true },
        { name: 'X-Region', value: 'eu' },
      ],
    });
    expect(kept.status).toBe(200);
    const again = await deliverOne(endpoint.id);
    expect(again.headers['x-api-key']).toBe(sensitiveValue);
    expect(again.headers['x-region']).toBe('eu');
    expect(again.headers['x-tenant']).toBeUndefined();

    for (const [index, name] of [
      [0, 'webhook-id'],
      [0, 'Hookbase-Attempt'],
      [0, 'Content-Type'],
      [0, 'host'],
      [0, 'Transfer-Encoding'],
      [0, 'bad name'],
    ] as const) {
      const refused = await client.post(base, {
        url: `${receiverUrl}/x`,
        headers: [{ name, value: 'v' }],
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_FAILED');
      expect(refused.body.error.details.issues).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: `headers.${index}.name` })]),
      );
    }
    const newValue = await client.post(base, {
      url: `${receiverUrl}/x`,
      headers: [{ name: 'x-new', sensitive: true }],
    });
    expect(newValue.status).toBe(400);
    expect(newValue.body.error.details.issues[0].path).toBe('headers.0.value');
    const tooMany = await client.post(base, {
      url: `${receiverUrl}/x`,
      headers: Array.from({ length: 21 }, (_, i) => ({ name: `x-h${i}`, value: 'v' })),
    });
    expect(tooMany.status).toBe(400);
    const onCloud = await client.post(base, {
      kind: 'polling',
      headers: [{ name: 'x-a', value: 'b' }],
    });
    expect(onCloud.status).toBe(400);
    expect(onCloud.body.error.details.issues[0].path).toBe('headers');
  });

  it('authenticates with basic and bearer, write-only and bound to the URL host', async () => {
    const basic = await create({
      url: `${receiverUrl}/basic`,
      auth: { type: 'basic', username: 'hookbase', password },
    });
    expect(basic.auth).toEqual({ type: 'basic', configured: true });
    const basicSeen = await deliverOne(basic.id);
    expect(basicSeen.headers.authorization).toBe(
      `Basic ${Buffer.from(`hookbase:${password}`).toString('base64')}`,
    );
    const bearer = await create({
      url: `${receiverUrl}/bearer`,
      auth: { type: 'bearer', token: bearerToken },
    });
    expect((await deliverOne(bearer.id)).headers.authorization).toBe(`Bearer ${bearerToken}`);

    // Another path on the same host keeps the auth; another host needs it sent again.
    const samePath = await client.patch(`${base}/${bearer.id}`, { url: `${receiverUrl}/other` });
    expect(samePath.status).toBe(200);
    expect(samePath.body.data.auth).toEqual({ type: 'bearer', configured: true });
    const otherHost = receiverUrl.replace('127.0.0.1', 'localhost');
    const moved = await client.patch(`${base}/${bearer.id}`, { url: `${otherHost}/x` });
    expect(moved.status).toBe(400);
    expect(moved.body.error.code).toBe('CREDENTIALS_TARGET_CHANGED');
    const movedWithAuth = await client.patch(`${base}/${bearer.id}`, {
      url: `${otherHost}/x`,
      auth: { type: 'bearer', token: bearerToken },
    });
    expect(movedWithAuth.status).toBe(200);
    const cleared = await client.patch(`${base}/${bearer.id}`, { auth: null });
    expect(cleared.body.data.auth).toBeNull();

    const both = await client.post(base, {
      url: `${receiverUrl}/x`,
      auth: { type: 'bearer', token: 't' },
      headers: [{ name: 'Authorization', value: 'x' }],
    });
    expect(both.status).toBe(400);
    expect(both.body.error.details.issues[0].path).toBe('headers.0.name');
  });

  it('takes a timeout of its own, at most HOOKBASE_DELIVERY_TIMEOUT_MS, and applies it', async () => {
    const tooLong = await client.post(base, { url: `${receiverUrl}/slow`, timeoutMs: 5001 });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details.issues[0].path).toBe('timeoutMs');
    const slow = new TestReceiver();
    const slowUrl = await slow.start();
    try {
      slow.respondWith(() => ({ status: 200, delayMs: 1_500 }));
      const endpoint = await create({ url: `${slowUrl}/slow`, timeoutMs: 300 });
      expect(endpoint.timeoutMs).toBe(300);
      const attempt = await client.post(`${base}/${endpoint.id}/test`, {});
      expect(attempt.status).toBe(200);
      expect(attempt.body.data).toMatchObject({ outcome: 'retry', responseStatus: null });
      expect(attempt.body.data.error).toMatch(/timeout|timed out/i);
      const patched = await client.patch(`${base}/${endpoint.id}`, { timeoutMs: null });
      expect(patched.body.data.timeoutMs).toBeNull();
      const ok = await client.post(`${base}/${endpoint.id}/test`, {});
      expect(ok.body.data).toMatchObject({ outcome: 'succeeded', responseStatus: 200 });
    } finally {
      await slow.stop();
    }
  });

  it('sends a signed test message now, outside every queue, and answers with the attempt', async () => {
    const endpoint = await create({
      url: `${receiverUrl}/test-send`,
      headers: [{ name: 'x-api-key', value: sensitiveValue, sensitive: true }],
      fifoEnabled: false,
    });
    const before = receiver.requests.length;
    const sent = await client.post(`${base}/${endpoint.id}/test`, {
      eventType: 'order.example',
      payload: { id: 42 },
    });
    expect(sent.status).toBe(200);
    expect(sent.body.data).toMatchObject({
      eventType: 'order.example',
      outcome: 'succeeded',
      responseStatus: 200,
      responseExcerpt: 'ok',
      error: null,
    });
    const seen = receiver.requests.slice(before).find((r) => r.path === '/test-send');
    expect(seen).toBeDefined();
    expect(JSON.parse(seen!.body)).toEqual({ id: 42 });
    expect(seen!.headers['webhook-id']).toBe(sent.body.data.webhookId);
    expect(seen!.headers['hookbase-event-type']).toBe('order.example');
    expect(seen!.headers['x-api-key']).toBe(sensitiveValue);
    // Nothing queued nor logged for it.
    const log = await client.get(`${org}/messages?endpointId=${endpoint.id}`);
    expect(log.body.data).toEqual([]);
    const byDefault = await client.post(`${base}/${endpoint.id}/test`);
    expect(byDefault.body.data).toMatchObject({ eventType: 'hookbase.test', outcome: 'succeeded' });
    const polling = await create({ kind: 'polling' });
    const refused = await client.post(`${base}/${polling.id}/test`, {});
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('FEATURE_NOT_AVAILABLE');
  });

  describe('OAuth2 client credentials', () => {
    let tokenUrl: string;
    const issued: string[] = [];
    const tokenRequests: { clientId: string; scope: string | null; audience: string | null }[] = [];
    let failingTokenUrl: string;
    let lifetimeSeconds = 3600;
    /** Tokens the receiver takes: issued ones, less those revoked. */
    const revoked = new Set<string>();
    const oauthReceiver = new TestReceiver();
    let oauthUrl: string;

    const readBody = (request: IncomingMessage) =>
      new Promise<string>((resolve) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });

    beforeAll(async () => {
      const tokenServer = createServer(async (request, response) => {
        const form = new URLSearchParams(await readBody(request));
        const [id, given] = Buffer.from(
          String(request.headers.authorization ?? '').replace(/^Basic /, ''),
          'base64',
        )
          .toString('utf8')
          .split(':')
          .map(decodeURIComponent);
        if (form.get('grant_type') !== 'client_credentials' || given !== clientSecret) {
          response.writeHead(401, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: 'invalid_client' }));
          return;
        }
        tokenRequests.push({
          clientId: id,
          scope: form.get('scope'),
          audience: form.get('audience'),
        });
        const token = `${id}-token-${issued.length + 1}-${randomBytes(6).toString('hex')}`;
        issued.push(token);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            access_token: token,
            token_type: 'Bearer',
            expires_in: lifetimeSeconds,
          }),
        );
      });
      tokenUrl = `http://127.0.0.1:${await listen(tokenServer)}/oauth/token`;
      const failing = createServer((_request, response) => {
        response.writeHead(503, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: 'temporarily_unavailable' }));
      });
      failingTokenUrl = `http://127.0.0.1:${await listen(failing)}/oauth/token`;
      oauthReceiver.respondWith((request) => {
        const token = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
        return issued.includes(token) && !revoked.has(token)
          ? { status: 200, body: 'ok' }
          : { status: 401, body: 'bad token' };
      });
      oauthUrl = await oauthReceiver.start();
    });

    afterAll(async () => {
      await oauthReceiver.stop();
    });

    const oauth = (clientId: string, url = tokenUrl) => ({
      type: 'oauth2_client_credentials',
      tokenUrl: url,
      clientId,
      clientSecret,
      scope: 'webhooks:write',
      audience: 'https://receiver.example',
    });
    const requestsOf = (clientId: string) =>
      tokenRequests.filter((request) => request.clientId === clientId).length;

    it('fetches a token on first use, caches it across attempts, and again after a 401', async () => {
      const endpoint = await create({ url: `${oauthUrl}/hooks`, auth: oauth('cached') });
      expect(endpoint.auth).toEqual({ type: 'oauth2_client_credentials', configured: true });
      const first = await deliverOne(endpoint.id, oauthReceiver);
      const second = await deliverOne(endpoint.id, oauthReceiver);
      expect(requestsOf('cached')).toBe(1);
      expect(tokenRequests.find((r) => r.clientId === 'cached')).toEqual({
        clientId: 'cached',
        scope: 'webhooks:write',
        audience: 'https://receiver.example',
      });
      expect(second.headers.authorization).toBe(first.headers.authorization);

      // The receiver stops taking the token: the attempt fetches a new one and sends again.
      revoked.add(String(first.headers.authorization).replace(/^Bearer /, ''));
      const third = await deliverOne(endpoint.id, oauthReceiver);
      const sends = await pollUntil(
        () => {
          const all = oauthReceiver.requests.filter(
            (r) => r.headers['webhook-id'] === third.headers['webhook-id'],
          );
          return all.length === 2 && all;
        },
        { description: 'the refused send and the one with a new token' },
      );
      expect(requestsOf('cached')).toBe(2);
      expect(sends[0].headers.authorization).toBe(first.headers.authorization);
      expect(sends[1].headers.authorization).not.toBe(first.headers.authorization);
      expect(sends[1].headers['hookbase-attempt']).toBe(sends[0].headers['hookbase-attempt']);
      const messages = await client.get(`${org}/messages?endpointId=${endpoint.id}`);
      expect(messages.body.data.every((m: any) => m.status === 'succeeded')).toBe(true);
    });

    it('fetches a new token once the cached one expires', async () => {
      lifetimeSeconds = 1;
      try {
        const endpoint = await create({ url: `${oauthUrl}/hooks`, auth: oauth('expiring') });
        await deliverOne(endpoint.id, oauthReceiver);
        expect(requestsOf('expiring')).toBe(1);
        const fetchedAt = Date.now();
        // Wait for the token's lifetime to pass (a condition on the clock, not a fixed sleep).
        await pollUntil(() => Date.now() - fetchedAt > 1_100, { description: 'a second passed' });
        await deliverOne(endpoint.id, oauthReceiver);
        expect(requestsOf('expiring')).toBe(2);
      } finally {
        lifetimeSeconds = 3600;
      }
    });

    it('retries when the token server fails, then dead-letters with a reason that says so', async () => {
      const endpoint = await create({
        url: `${oauthUrl}/hooks`,
        auth: oauth('failing', failingTokenUrl),
        retry: { delaysMs: [0, 200, 200], maxAgeMs: 600_000 },
      });
      const published = await client.post('/v1/events', {
        eventType: 'receiver.test',
        payload: {},
        endpointIds: [endpoint.id],
      });
      expect(published.status).toBe(202);
      const entry = await pollUntil(
        async () =>
          (await client.get(`${org}/dlq?endpointId=${endpoint.id}`)).body.data?.[0] as any,
        { description: 'the message dead-lettered', timeoutMs: 60_000 },
      );
      expect(entry.reason).toBe('max_attempts');
      const message = (await client.get(`${org}/messages/${entry.messageId}`)).body.data;
      expect(message.attemptHistory).toHaveLength(3);
      expect(entry.lastError).toMatch(/oauth2 token request failed/);
      for (const attempt of message.attemptHistory) {
        expect(attempt.outcome).toBe('retry');
        expect(attempt.error).toMatch(/oauth2 token request failed: .* answered 503/);
      }
      expect(
        oauthReceiver.requests.some((r) => r.path === '/hooks' && !r.headers.authorization),
      ).toBe(false);
    });
  });

  describe('TLS: client certificates and an endpoint CA', () => {
    let mtlsUrl: string;
    let selfSignedUrl: string;
    const mtlsSeen: string[] = [];

    beforeAll(async () => {
      const mtls = createHttpsServer(
        {
          cert: tls.serverCert,
          key: tls.serverKey,
          ca: tls.caCert,
          requestCert: true,
          rejectUnauthorized: true,
        },
        (request, response) => {
          const peer = (request.socket as import('node:tls').TLSSocket).getPeerCertificate();
          mtlsSeen.push(String(peer.subject?.CN));
          request.resume();
          request.on('end', () => {
            response.writeHead(200);
            response.end('mtls ok');
          });
        },
      );
      mtlsUrl = `https://127.0.0.1:${await listen(mtls)}/hooks`;
      const selfSigned = createHttpsServer(
        { cert: tls.selfSignedCert, key: tls.selfSignedKey },
        (request, response) => {
          request.resume();
          request.on('end', () => {
            response.writeHead(200);
            response.end('self-signed ok');
          });
        },
      );
      selfSignedUrl = `https://127.0.0.1:${await listen(selfSigned)}/hooks`;
    });

    it('presents the client certificate to a receiver that demands one', async () => {
      const endpoint = await create({
        url: mtlsUrl,
        auth: { type: 'mtls', certificate: tls.clientCert, privateKey: tls.clientKey },
        tlsCa: tls.caCert,
      });
      expect(endpoint.auth).toEqual({ type: 'mtls', configured: true });
      expect(endpoint.tlsCa).toBe(tls.caCert);
      const sent = await client.post(`${base}/${endpoint.id}/test`, {});
      expect(sent.body.data).toMatchObject({ outcome: 'succeeded', responseExcerpt: 'mtls ok' });
      // Through the pipeline too.
      const published = await client.post('/v1/events', {
        eventType: 'receiver.test',
        payload: {},
        endpointIds: [endpoint.id],
      });
      expect(published.status).toBe(202);
      await pollUntil(
        async () =>
          (await client.get(`${org}/messages?endpointId=${endpoint.id}&status=succeeded`)).body.data
            ?.length === 1,
        { description: 'the mTLS delivery succeeded' },
      );
      expect(mtlsSeen.filter((cn) => cn === 'hookbase-client')).toHaveLength(mtlsSeen.length);
      const withoutCert = await create({ url: mtlsUrl, tlsCa: tls.caCert });
      const refused = await client.post(`${base}/${withoutCert.id}/test`, {});
      expect(refused.body.data.outcome).toBe('retry');
      expect(refused.body.data.responseStatus).toBeNull();
    });

    it("trusts a self-signed receiver with the endpoint's CA, and refuses it without", async () => {
      const trusted = await create({ url: selfSignedUrl, tlsCa: tls.selfSignedCert });
      const ok = await client.post(`${base}/${trusted.id}/test`, {});
      expect(ok.body.data).toMatchObject({
        outcome: 'succeeded',
        responseExcerpt: 'self-signed ok',
      });
      const untrusted = await create({ url: selfSignedUrl });
      const refused = await client.post(`${base}/${untrusted.id}/test`, {});
      expect(refused.body.data.outcome).toBe('retry');
      expect(refused.body.data.error).toMatch(/certificate/i);
    });
  });

  it('shows no secret in any GET body, the message log or the logs of the run', async () => {
    const secrets = [
      sensitiveValue,
      password,
      bearerToken,
      clientSecret,
      Buffer.from(`hookbase:${password}`).toString('base64'),
      tls.clientKey.split('\n')[1],
    ];
    const endpoints = await client.get(`${base}?limit=250`);
    expect(endpoints.status).toBe(200);
    const bodies = [JSON.stringify(endpoints.body)];
    for (const endpoint of endpoints.body.data) {
      bodies.push(JSON.stringify((await client.get(`${base}/${endpoint.id}`)).body));
      const messages = await client.get(`${org}/messages?endpointId=${endpoint.id}&limit=250`);
      bodies.push(JSON.stringify(messages.body));
      for (const message of messages.body.data) {
        bodies.push(JSON.stringify((await client.get(`${org}/messages/${message.id}`)).body));
      }
    }
    bodies.push(JSON.stringify((await client.get(`${org}/dlq?limit=250`)).body));
    expect(lines.length).toBeGreaterThan(10);
    for (const text of [...bodies, ...lines]) {
      for (const value of secrets) expect(text).not.toContain(value);
    }
  });
});
