import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Message, PubSub } from '@google-cloud/pubsub';
import {
  OutboundMessage,
  PubsubDestinationAdapter,
  SqsDestinationAdapter,
} from '@hookbase/destinations';
import {
  emulatorAwsCredentials,
  emulatorGoogleCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  ensurePubsub,
  pollUntil,
  receiveFromQueue,
  stubResolver,
} from '@hookbase/testing';

/**
 * The cloud kinds and HOOKBASE_EGRESS_PROXY: SQS deliveries to moto and Pub/Sub publishes to its
 * emulator tunnel through a real CONNECT proxy on loopback, no_proxy destinations go straight, a
 * proxy's refusal is the attempt's error, and a user's endpoint name that resolves to a private
 * address is refused before the proxy is asked.
 */
describe('cloud kinds through the egress proxy (SQS on moto, Pub/Sub emulator)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let sqs: SQSClient;
  let proxy: Server;
  let proxyUrl: string;
  const connects: string[] = [];
  const sockets = new Set<Socket>();
  const adapters: SqsDestinationAdapter[] = [];

  const message = (n: number): OutboundMessage => ({
    messageId: `msg_${run}_${n}`,
    webhookId: `msg_${run}_${n}`,
    eventId: `evt_${run}_${n}`,
    eventType: 'order.created',
    payload: { n },
    attemptNumber: 1,
  });
  const target = (queueUrl: string, endpoint = moto!.url) => ({
    endpointId: `ep_${run}`,
    kind: 'sqs' as const,
    url: null,
    config: { region, queueUrl, endpoint, credentials: emulatorAwsCredentials() },
    secrets: [],
  });
  const adapter = (options: Partial<ConstructorParameters<typeof SqsDestinationAdapter>[0]>) => {
    const made = new SqsDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: true,
      ...options,
    });
    adapters.push(made);
    return made;
  };

  beforeAll(async () => {
    moto = await ensureMoto();
    sqs = new SQSClient({ region, endpoint: moto.url, credentials: emulatorAwsCredentials() });
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
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(adapters.map((a) => a.close()));
    sqs?.destroy();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => proxy?.close(resolve));
    await moto?.release();
  });

  it('tunnels a Pub/Sub publish (gRPC) through the proxy with CONNECT, and no_proxy goes straight', async () => {
    const fake = await ensurePubsub();
    const projectId = 'hookbase-test';
    const pubsub = new PubSub({
      projectId,
      apiEndpoint: fake.host,
      emulatorMode: true,
      universeDomain: 'googleapis.com',
    });
    const proxied = new PubsubDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: true,
      egressProxy: { url: proxyUrl, noProxy: [] },
    });
    const straight = new PubsubDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: true,
      egressProxy: {
        url: proxyUrl,
        noProxy: [{ host: '127.0.0.1', port: Number(fake.host.split(':')[1]) }],
      },
    });
    try {
      const name = `hookbase-${run}-proxied`;
      const [topic] = await pubsub.createTopic(name);
      const [subscription] = await topic.createSubscription(`${name}-sub`);
      const received: Message[] = [];
      subscription.on('message', (m: Message) => {
        received.push(m);
        m.ack();
      });
      subscription.on('error', () => {});
      const target = {
        endpointId: `ep_${run}`,
        kind: 'pubsub' as const,
        url: null,
        config: {
          projectId,
          topic: name,
          endpoint: `http://${fake.host}`,
          credentials: emulatorGoogleCredentials(),
        },
        secrets: [],
      };
      const before = connects.length;
      const report = await proxied.deliver(message(10), target);
      expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
      expect(connects.slice(before)).toContain(fake.host);
      const tunnels = connects.length;
      const direct = await straight.deliver(message(11), target);
      expect(direct.outcome).toEqual({ kind: 'succeeded', status: 200 });
      expect(connects.length).toBe(tunnels);
      await pollUntil(() => received.length >= 2, { description: 'both publishes received' });
      expect(received.map((m) => JSON.parse(m.data.toString('utf8')).n).sort()).toEqual([10, 11]);
      await subscription.close();
    } finally {
      await Promise.all([proxied.close(), straight.close()]);
      await pubsub.close();
      await fake.release();
    }
  });

  const queue = async (name: string) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: `hookbase-${run}-${name}` }))).QueueUrl!;

  it('tunnels an SQS delivery through the proxy with CONNECT', async () => {
    const queueUrl = await queue('proxied');
    const proxied = adapter({ egressProxy: { url: proxyUrl, noProxy: [] } });
    const before = connects.length;
    const report = await proxied.deliver(message(1), target(queueUrl));
    expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
    expect(connects.slice(before)).toContain(new URL(moto!.url).host);
    const [received] = await receiveFromQueue(sqs, queueUrl, 1, 10_000);
    expect(JSON.parse(received.Body!)).toEqual({ n: 1 });
  });

  it('sends a no_proxy destination straight', async () => {
    const queueUrl = await queue('straight');
    const straight = adapter({
      egressProxy: {
        url: proxyUrl,
        noProxy: [{ host: '127.0.0.1', port: Number(new URL(moto!.url).port) }],
      },
    });
    const before = connects.length;
    const report = await straight.deliver(message(2), target(queueUrl));
    expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
    expect(connects.length).toBe(before);
  });

  it('reports the proxy refusing the tunnel as the attempt error', async () => {
    const queueUrl = await queue('refused');
    const port = new URL(moto!.url).port;
    // The proxy only tunnels to 127.0.0.1: a name it is asked for is refused (403).
    const refused = adapter({
      egressProxy: { url: proxyUrl, noProxy: [] },
      resolver: stubResolver({ 'sqs.public.test': ['93.184.216.34'] }),
    });
    const report = await refused.deliver(
      message(3),
      target(queueUrl.replace('127.0.0.1', 'sqs.public.test'), `http://sqs.public.test:${port}`),
    );
    expect(report.outcome.kind).not.toBe('succeeded');
    expect(connects).toContain(`sqs.public.test:${port}`);
    expect(JSON.stringify(report.outcome)).toContain('403');
  });

  it('refuses a user endpoint name that resolves to a private address before asking the proxy', async () => {
    const queueUrl = await queue('guarded');
    const port = new URL(moto!.url).port;
    const resolver = stubResolver({ 'sqs.internal.test': ['10.1.2.3'] });
    const guarded = adapter({
      allowPrivateTargets: false,
      egressProxy: { url: proxyUrl, noProxy: [] },
      resolver,
    });
    const before = connects.length;
    const report = await guarded.deliver(
      message(4),
      target(
        queueUrl.replace('127.0.0.1', 'sqs.internal.test'),
        `http://sqs.internal.test:${port}`,
      ),
    );
    expect(report.outcome.kind).not.toBe('succeeded');
    expect(resolver.asked).toContain('sqs.internal.test');
    expect(connects.length).toBe(before);
  });
});
