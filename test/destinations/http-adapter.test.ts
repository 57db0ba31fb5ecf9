import { createServer, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { HttpDestinationAdapter } from '@hookbase/destinations';
import { generateSecret } from '@hookbase/signing';
import { TestReceiver } from '@hookbase/testing';
import { Webhook } from 'standardwebhooks';

/** The HTTP adapter against a real receiver on loopback: what each transport situation becomes. */
describe('HttpDestinationAdapter', () => {
  const receiver = new TestReceiver();
  let url: string;
  const secret = generateSecret();
  const adapter = (
    overrides: Partial<ConstructorParameters<typeof HttpDestinationAdapter>[0]> = {},
  ) =>
    new HttpDestinationAdapter({
      timeoutMs: 1_000,
      connectTimeoutMs: 1_000,
      allowPrivateTargets: true,
      responseExcerptBytes: 16,
      userAgent: 'Hookbase/test',
      ...overrides,
    });
  const message = {
    messageId: 'msg_1',
    webhookId: 'msg_1',
    eventId: 'evt_1',
    eventType: 'a.b',
    payload: { n: 1 },
    attemptNumber: 3,
  };
  const target = (path = '/hook', secrets = [secret]) => ({
    endpointId: 'ep_1',
    kind: 'http' as const,
    url: `${url}${path}`,
    config: {},
    secrets,
  });

  beforeAll(async () => {
    url = await receiver.start();
  });
  afterAll(() => receiver.stop());

  it('posts the payload with Standard Webhooks and Hookbase headers', async () => {
    receiver.respondWith(() => ({ status: 202, body: 'accepted' }));
    const http = adapter();
    const report = await http.deliver(message, target());
    await http.close();
    expect(report.outcome).toEqual({ kind: 'succeeded', status: 202 });
    expect(report.responseExcerpt).toBe('accepted');
    const request = receiver.requests.at(-1)!;
    expect(JSON.parse(request.body)).toEqual({ n: 1 });
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Hookbase/test',
      'webhook-id': 'msg_1',
      'hookbase-event-id': 'evt_1',
      'hookbase-event-type': 'a.b',
      'hookbase-attempt': '3',
    });
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
  });

  it('signs every attempt afresh: the same id and body, a timestamp and a signature of its own', async () => {
    receiver.respondWith(() => ({ status: 200 }));
    const http = adapter();
    const sentAt = Date.now();
    await http.deliver(message, target());
    const now = jest.spyOn(Date, 'now').mockReturnValue(sentAt + 90_000);
    try {
      await http.deliver({ ...message, attemptNumber: 4 }, target());
    } finally {
      now.mockRestore();
      await http.close();
    }
    const [first, second] = receiver.requests.slice(-2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(
      Number(first.headers['webhook-timestamp']) + 89,
    );
    expect(second.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    // Each verifies against the secret at its own time.
    for (const request of [first, second]) {
      const at = Number(request.headers['webhook-timestamp']) * 1000;
      const clock = jest.spyOn(Date, 'now').mockReturnValue(at);
      try {
        expect(
          new Webhook(secret).verify(request.body, {
            'webhook-id': String(request.headers['webhook-id']),
            'webhook-timestamp': String(request.headers['webhook-timestamp']),
            'webhook-signature': String(request.headers['webhook-signature']),
          }),
        ).toEqual({ n: 1 });
      } finally {
        clock.mockRestore();
      }
    }
  });

  it('never follows a redirect', async () => {
    receiver.respondWith((request) =>
      request.path === '/moved'
        ? { status: 302, headers: { location: `${url}/hook` } }
        : { status: 200 },
    );
    const before = receiver.requests.length;
    const http = adapter();
    const report = await http.deliver(message, target('/moved'));
    await http.close();
    expect(report.outcome).toMatchObject({ kind: 'failed', status: 302 });
    expect(receiver.requests.length - before).toBe(1);
  });

  it('retries a receiver that is too slow, as a timeout', async () => {
    receiver.respondWith(() => ({ status: 200, delayMs: 1_500 }));
    const http = adapter({ timeoutMs: 300 });
    const report = await http.deliver(message, target());
    await http.close();
    expect(report.outcome).toEqual({ kind: 'retry', error: 'timeout' });
  });

  it('retries a dropped connection as a network error', async () => {
    receiver.respondWith(() => ({ drop: true }));
    const http = adapter();
    const report = await http.deliver(message, target());
    await http.close();
    expect(report.outcome).toMatchObject({
      kind: 'retry',
      error: expect.stringMatching(/^network: /),
    });
  });

  it('carries Retry-After and keeps only a bounded excerpt of the response', async () => {
    receiver.respondWith(() => ({
      status: 429,
      headers: { 'retry-after': '7' },
      body: 'x'.repeat(1000),
    }));
    const http = adapter();
    const report = await http.deliver(message, target());
    await http.close();
    expect(report.outcome).toEqual({
      kind: 'retry',
      status: 429,
      error: 'HTTP 429',
      retryAfterMs: 7000,
    });
    expect(report.responseExcerpt).toBe('x'.repeat(16));
  });

  it('refuses private targets at connection time, names included, when they are not allowed', async () => {
    const before = receiver.requests.length;
    // A resolver that answers like a rebinding attacker's DNS: a public-looking name, inside.
    const http = adapter({
      allowPrivateTargets: false,
      resolver: (_hostname, _options, callback) =>
        callback(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    const port = new URL(url).port;
    // A literal is refused by the URL rule; a name that resolves inside, by the guarded lookup.
    const literal = await http.deliver(message, {
      ...target(),
      url: `http://127.0.0.1:${port}/hook`,
    });
    const named = await http.deliver(message, {
      ...target(),
      url: `http://hooks.example.com:${port}/hook`,
    });
    await http.close();
    expect(literal.outcome).toMatchObject({ kind: 'failed' });
    expect(named.outcome).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(
        /hooks\.example\.com resolves to a private, loopback or link-local address/,
      ),
    });
    // The tenant learns the name is refused, not what it resolved to inside.
    expect(named.outcome.kind === 'failed' && named.outcome.error).not.toContain('127.0.0.1');
    expect(receiver.requests.length).toBe(before);
  });

  it('fails an endpoint with no signing secret instead of sending it unsigned', async () => {
    const http = adapter();
    const report = await http.deliver(message, target('/hook', []));
    await http.close();
    expect(report.outcome).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(/cannot sign/),
    });
  });

  it('keeps as many requests open to one receiver host as it is given connections', async () => {
    // A receiver that answers only once `count` requests are open at the same time: requests
    // queued behind a smaller connection limit would wait until their timeout instead.
    const count = 100;
    const open: ServerResponse[] = [];
    let most = 0;
    const host = createServer((req, res) => {
      req.resume();
      open.push(res);
      most = Math.max(most, open.length);
      if (open.length === count) for (const held of open.splice(0)) held.writeHead(204).end();
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    const http = adapter({ timeoutMs: 5_000, connectionsPerOrigin: count });
    try {
      const reports = await Promise.all(
        Array.from({ length: count }, (_, n) =>
          http.deliver(
            { ...message, messageId: `msg_${n}`, webhookId: `msg_${n}` },
            { ...target(), endpointId: `ep_${n}`, url: `${hostUrl}/ep_${n}` },
          ),
        ),
      );
      expect(reports.map((report) => report.outcome.kind)).toEqual(
        Array.from({ length: count }, () => 'succeeded'),
      );
      expect(most).toBe(count);
    } finally {
      await http.close();
      for (const held of open) held.destroy();
      await new Promise((resolve) => host.close(resolve));
    }
  });
});
