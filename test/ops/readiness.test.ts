import {
  ApiClient,
  ApiResponse,
  HookbaseProcess,
  pollUntil,
  RunningStack,
  ScratchKafka,
  spawnHookbase,
  startStack,
  TcpProxy,
  testEnvironment,
} from '@hookbase/testing';

/**
 * Readiness means "can do its job now": with PostgreSQL or Kafka gone, `/health/ready` turns 503
 * and names what is missing, on an HTTP service (the standalone process) and on a worker (a
 * dispatcher, on its own ops port), while `/health/live` stays 200; once the dependency is back,
 * ready turns 200 again by itself. PostgreSQL is cut with a proxy in front of the shared server,
 * Kafka is a broker of this test's own.
 */
describe('health: live and ready through PostgreSQL and Kafka outages', () => {
  const kafka = new ScratchKafka();
  let proxy: TcpProxy;
  let stack: RunningStack;
  let worker: HookbaseProcess;
  let services: { name: string; client: ApiClient }[];

  beforeAll(async () => {
    await kafka.start();
    const target = new URL(testEnvironment().databaseUrl);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const port = await proxy.start();
    stack = await startStack(
      { KAFKA_BROKERS: kafka.brokers, HOOKBASE_KAFKA_SESSION_TIMEOUT_MS: '6000' },
      {
        viaDatabaseUrl: (url) => {
          const routed = new URL(url);
          routed.host = `127.0.0.1:${port}`;
          return routed.toString();
        },
      },
    );
    const dispatcher = await spawnHookbase('dispatcher', {
      ...stack.process.env,
      HOOKBASE_OPS_PORT: '0',
    });
    worker = dispatcher.process;
    const [, opsUrl] = await worker.waitForLine(/health and metrics on (http:\/\/\S+)/, 10_000);
    services = [
      { name: 'standalone', client: new ApiClient(stack.url) },
      { name: 'dispatcher', client: new ApiClient(opsUrl) },
    ];
  });

  afterAll(async () => {
    await worker?.stop();
    await stack?.stop();
    await proxy?.stop();
    await kafka.destroy();
  });

  /** Polls every service's /health/ready until each answers as `expected` says. */
  async function untilEvery(
    description: string,
    expected: (response: ApiResponse) => boolean,
    timeoutMs = 60_000,
  ): Promise<ApiResponse[]> {
    return pollUntil(
      async () => {
        const answers = await Promise.all(
          services.map(({ client }) => client.get('/health/ready')),
        );
        return answers.every(expected) ? answers : undefined;
      },
      { timeoutMs, intervalMs: 250, description },
    ).catch((error: Error) => {
      throw new Error(
        `${error.message}\nstandalone:\n${stack.process.logs(60)}\ndispatcher:\n${worker.logs(60)}`,
      );
    });
  }

  async function expectLive(): Promise<void> {
    for (const { client } of services) {
      const live = await client.get('/health/live');
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ data: { status: 'live' } });
      expect((await client.get('/health')).body).toEqual({ data: { status: 'ok' } });
    }
  }

  const isReady = (response: ApiResponse) => response.status === 200;

  it('is ready once PostgreSQL, Kafka and the consumers are', async () => {
    const [standalone, dispatcher] = await untilEvery('every service ready at start', isReady);
    expect(standalone.body.data.status).toBe('ready');
    expect(standalone.body.data.checks.map((c: { name: string }) => c.name)).toEqual([
      'kafka',
      'kafka-consumer:dispatcher',
      'kafka-consumer:dlq-handler',
      'kafka-consumer:fanout',
      'postgresql',
    ]);
    expect(dispatcher.body.data.checks).toEqual([
      { name: 'kafka', ready: true },
      { name: 'kafka-consumer:dispatcher', ready: true },
      { name: 'postgresql', ready: true },
    ]);
    await expectLive();
    // The worker's ops port serves its metrics too, in the Prometheus text format.
    const metrics = await fetch(`${services[1].client.baseUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await metrics.text()).toMatch(/^hookbase_consumer_lag\{group="[^"]+\.dispatcher"/m);
  });

  it('is not ready while PostgreSQL is gone, says so, and is ready again after', async () => {
    await proxy.cut();
    const down = await untilEvery('not ready without PostgreSQL', (r) => r.status === 503);
    for (const answer of down) {
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(answer.body.error.message).toMatch(/^Not ready: .*postgresql: /);
      expect(answer.body.error.details.checks).toContainEqual(
        expect.objectContaining({ name: 'postgresql', ready: false, problem: expect.any(String) }),
      );
    }
    await expectLive();
    await proxy.restore();
    await untilEvery('ready again once PostgreSQL is back', isReady);
  });

  it('is not ready while Kafka is gone, says so, and is ready again after', async () => {
    await kafka.stop();
    const down = await untilEvery('not ready without Kafka', (r) => r.status === 503);
    for (const answer of down) {
      expect(answer.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(answer.body.error.details.checks).toContainEqual(
        expect.objectContaining({ name: 'kafka', ready: false, problem: expect.any(String) }),
      );
      expect(answer.body.error.details.checks).toContainEqual({ name: 'postgresql', ready: true });
    }
    await expectLive();
    await kafka.start();
    // Consumers rejoin their groups after Kafka's restart (session timeout 6 s, restart backoff
    // at most 5 s); the deadline leaves room for a loaded machine.
    await untilEvery('ready again once Kafka is back', isReady, 90_000);
  });
});
