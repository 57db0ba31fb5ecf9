import { createServer, Server } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/**
 * HOOKBASE_EGRESS_PROXY: http deliveries and OAuth2 token requests tunnel through a real CONNECT
 * proxy on loopback; HOOKBASE_EGRESS_NO_PROXY sends the destinations it names straight.
 */
describe('egress proxy', () => {
  const proxied = new TestReceiver();
  const direct = new TestReceiver();
  const connects: string[] = [];
  const sockets = new Set<Socket>();
  let proxy: Server;
  let stack: RunningStack;
  let proxiedUrl: string;
  let directUrl: string;

  beforeAll(async () => {
    [proxiedUrl, directUrl] = await Promise.all([proxied.start(), direct.start()]);
    proxy = createServer((_request, response) => {
      // Only CONNECT is served: a plain proxied request would bypass what the test checks.
      response.writeHead(405);
      response.end();
    });
    proxy.on('connect', (request, client: Socket, head: Buffer) => {
      const target = String(request.url);
      connects.push(target);
      const [host, port] = target.split(':');
      if (host !== '127.0.0.1') {
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      const upstream = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyPort = (proxy.address() as AddressInfo).port;
    stack = await startStack({
      HOOKBASE_EGRESS_PROXY: `http://127.0.0.1:${proxyPort}`,
      HOOKBASE_EGRESS_NO_PROXY: `example.invalid, ${new URL(directUrl).host}`,
    });
  });

  afterAll(async () => {
    await stack?.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    await Promise.all([proxied.stop(), direct.stop()]);
  });

  it('tunnels deliveries through the proxy, and sends no_proxy destinations straight', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const base = `/api/organizations/${organizationId}/webhook-endpoints`;
    const through = await client.post(base, {
      url: `${proxiedUrl}/via-proxy`,
      auth: { type: 'bearer', token: 'proxied-token' },
    });
    const straight = await client.post(base, { url: `${directUrl}/direct` });
    expect([through.status, straight.status]).toEqual([201, 201]);
    const published = await client.post('/v1/events', { eventType: 'proxy.test', payload: {} });
    expect(published.status).toBe(202);
    await pollUntil(() => proxied.requests.length > 0 && direct.requests.length > 0, {
      description: 'both receivers reached',
    });
    expect(proxied.requests[0].headers.authorization).toBe('Bearer proxied-token');
    expect(connects).toContain(new URL(proxiedUrl).host);
    expect(connects).not.toContain(new URL(directUrl).host);

    // The test send leaves the same way.
    const before = connects.length;
    const sent = await client.post(`${base}/${through.body.data.id}/test`, {});
    expect(sent.body.data.outcome).toBe('succeeded');
    expect(connects.length).toBeGreaterThan(before);
  });
});
