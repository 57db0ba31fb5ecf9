import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  ApiClient,
  createTenant,
  createTestDatabase,
  deleteTopicsUnder,
  HookbaseProcess,
  pollUntil,
  spawnHookbase,
  testEnvironment,
  TestReceiver,
} from '@hookbase/testing';

type Role = 'ingest' | 'api' | 'fanout' | 'dispatcher' | 'dlq-handler';

/** The chart's topology, as processes on this machine. */
const TOPOLOGY: Record<Role, number> = {
  ingest: 2,
  api: 1,
  fanout: 2,
  dispatcher: 3,
  'dlq-handler': 1,
};
const FIFO_ENDPOINTS = 4;
const PLAIN_ENDPOINTS = 2;
const ENDPOINT_CONCURRENCY = 5;
const PUBLISH_EVERY_MS = 40;
const LEASE_MS = 30_000;
/** Deliveries in each measured window (about 10 s at the offered load). */
const WINDOW_DELIVERIES = 1_200;
const ROOT = join(__dirname, '..', '..');

interface Replica {
  role: Role;
  process: HookbaseProcess;
  url?: string;
}

/**
 * The scale-out rehearsal: 2 ingest, 1 API, 2 fan-out, 3 dispatchers and 1 DLQ handler against the
 * one broker and database, HTTP and FIFO endpoints receiving a steady publish stream. During the
 * load every service is restarted one replica at a time (SIGTERM, start again), the dispatchers are
 * scaled from 3 to 1 and back to 3, and one dispatcher is SIGKILLed. At the end every accepted
 * event reached every endpoint, FIFO first deliveries are in order, duplicates come only from the
 * SIGKILL, and no SIGTERM left a FIFO lane to its lease.
 */
describe('the chart topology under a rolling restart, scaling and a crash', () => {
  const receiver = new TestReceiver();
  let receiverUrl: string;
  const replicas: Replica[] = [];
  let env: Record<string, string>;
  let db: Client;
  let dropDatabase: (() => Promise<void>) | undefined;

  const start = async (role: Role): Promise<Replica> => {
    const port: Record<string, string> =
      role === 'ingest' || role === 'api' ? {} : { HOOKBASE_OPS_PORT: '0' };
    const started = await spawnHookbase(role, { ...env, ...port });
    const replica = { role, process: started.process, url: started.url };
    replicas.push(replica);
    return replica;
  };
  const running = (role: Role) => replicas.filter((r) => r.role === role);
  const remove = (replica: Replica) => replicas.splice(replicas.indexOf(replica), 1);
  /** SIGTERM: exit 0, and every FIFO lane it held handed back (none left to its lease). */
  const stopInOrder = async (replica: Replica) => {
    remove(replica);
    const pid = replica.process.pid!;
    const code = await replica.process.stop(60_000);
    const log = code === 0 ? '' : replica.process.logs(30);
    expect({ role: replica.role, code, log }).toEqual({ role: replica.role, code: 0, log: '' });
    if (replica.role === 'dispatcher') {
      expect(replica.process.logs(400)).not.toMatch(/keep their lease/);
      const held = await db.query(`SELECT endpoint_id FROM fifo_lanes WHERE owner LIKE $1`, [
        `%/${pid}/%`,
      ]);
      // What the replica said at its stop, when a lane was left behind.
      const log = held.rows.length > 0 ? replica.process.logs(40) : '';
      expect({ pid, held: held.rows, log }).toEqual({ pid, held: [], log: '' });
    }
  };

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith(() => ({ status: 200, delayMs: 20 }));
    const { databaseUrl, kafkaBrokers } = testEnvironment();
    const database = await createTestDatabase(databaseUrl);
    dropDatabase = () => database.drop();
    env = {
      DATABASE_URL: database.url,
      KAFKA_BROKERS: kafkaBrokers,
      HOOKBASE_TOPIC_PREFIX: `test-${randomBytes(4).toString('hex')}`,
      HOOKBASE_ADMIN_TOKEN: randomBytes(24).toString('hex'),
      HOOKBASE_CREDENTIALS_KEY: randomBytes(32).toString('base64'),
      HOOKBASE_ALLOW_PRIVATE_TARGETS: 'true',
      HOOKBASE_RUN_MIGRATIONS: 'false',
      HOOKBASE_FIFO_LEASE_MS: String(LEASE_MS),
      HOOKBASE_FIFO_SWEEP_MS: '200',
      HOOKBASE_KAFKA_SESSION_TIMEOUT_MS: '6000',
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      HOOKBASE_SHUTDOWN_DRAIN_MS: '15000',
      PORT: '0',
      HOOKBASE_GRPC_PORT: '0',
      LOG_LEVEL: 'info',
    };
    db = new Client({ connectionString: database.url });
    await db.connect();
    // What the chart's install Job does, then the services, as many as the chart runs.
    const migrate = await spawnHookbase('migrate', env);
    await migrate.process.waitForLine(/installation ready/, 60_000);
    for (const [role, count] of Object.entries(TOPOLOGY) as [Role, number][]) {
      for (let i = 0; i < count; i++) await start(role);
    }
  }, 600_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.process.kill()));
    await db?.end();
    await receiver.stop();
    // As a stack does: nothing left behind on the shared PostgreSQL and broker.
    await dropDatabase?.();
    if (env) await deleteTopicsUnder(env.KAFKA_BROKERS, env.HOOKBASE_TOPIC_PREFIX);
  });

  it('delivers everything, in order, through restarts, scaling and a SIGKILL', async () => {
    const api = running('api')[0];
    const { organizationId, apiKey, client } = await createTenant(
      api.url!,
      env.HOOKBASE_ADMIN_TOKEN,
      'pro',
    );
    const org = `/api/organizations/${organizationId}`;
    for (let i = 0; i < FIFO_ENDPOINTS + PLAIN_ENDPOINTS; i++) {
      const fifo = i < FIFO_ENDPOINTS;
      const created = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/${fifo ? 'fifo' : 'plain'}/${i}`,
        fifoEnabled: fifo,
        eventTypes: ['load'],
      });
      expect(created.status).toBe(201);
    }

    // The steady stream: one event every PUBLISH_EVERY_MS, each sent until an ingest accepts it
    // (another replica, or the same key again after a 503), so acceptance order is send order.
    const accepted: number[] = [];
    let publishing = true;
    const publishStarted = Date.now();
    let publishEnded = publishStarted;
    const publisher = (async () => {
      for (let n = 0; publishing; n++) {
        const idempotencyKey = randomUUID();
        for (let tries = 0; ; tries++) {
          const ingest = running('ingest')[tries % Math.max(1, running('ingest').length)];
          const answer = ingest
            ? await new ApiClient(ingest.url!, apiKey)
                .post('/v1/events', { eventType: 'load', payload: { n }, idempotencyKey })
                .catch(() => undefined)
            : undefined;
          if (answer?.status === 202) break;
          if (tries > 200) throw new Error(`event ${n} never accepted: ${answer?.status}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        accepted.push(n);
        await new Promise((resolve) => setTimeout(resolve, PUBLISH_EVERY_MS));
      }
    })();
    const delivered = () => new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size;
    const waitForProgress = (what: string, count = 20) => {
      const before = delivered();
      return pollUntil(() => delivered() > before + count, {
        timeoutMs: 90_000,
        description: what,
      });
    };
    /** Deliveries per second received between two instants. */
    const rate = (from: number, to: number) =>
      (receiver.requests.filter((r) => r.receivedAt >= from && r.receivedAt < to).length * 1000) /
      (to - from);
    await waitForProgress('deliveries under load');

    // Rolling restart of every service, one replica at a time.
    const restartStarted = Date.now();
    const restarts: { role: Role; at: number }[] = [];
    for (const role of Object.keys(TOPOLOGY) as Role[]) {
      for (const replica of [...running(role)]) {
        restarts.push({ role, at: Date.now() });
        await stopInOrder(replica);
        await start(role);
      }
      await waitForProgress(`deliveries after restarting ${role}`);
    }
    const restartEnded = Date.now();
    // The API replica changed: talk to the new one.
    const apiNow = new ApiClient(running('api')[0].url!, apiKey);

    // Dispatchers 3 → 1 → 3.
    for (const replica of running('dispatcher').slice(1)) await stopInOrder(replica);
    // Measured once the group has settled: the next deliveries, then a window of steady load.
    await waitForProgress('deliveries with one dispatcher');
    let from = Date.now();
    await waitForProgress('a window of deliveries with one dispatcher', WINDOW_DELIVERIES);
    const oneDispatcher = rate(from, Date.now());
    await start('dispatcher');
    await start('dispatcher');
    await waitForProgress('deliveries with three dispatchers again');
    from = Date.now();
    await waitForProgress('a window of deliveries with three dispatchers', WINDOW_DELIVERIES);
    const threeDispatchers = rate(from, Date.now());

    // One dispatcher crashes.
    const crashed = running('dispatcher')[0];
    remove(crashed);
    await crashed.process.kill();
    await start('dispatcher');
    await waitForProgress('deliveries after the crash');

    publishing = false;
    await publisher;
    publishEnded = Date.now();
    const expected = accepted.length * (FIFO_ENDPOINTS + PLAIN_ENDPOINTS);
    await pollUntil(() => delivered() >= expected, {
      timeoutMs: LEASE_MS + 120_000,
      description: `all ${expected} messages delivered`,
    });

    // The figures for bench/README.md: the offered load, deliveries/s with 1 and 3 dispatchers at
    // that load, and the longest time without any delivery during the rolling restart.
    const during = receiver.requests
      .map((r) => r.receivedAt)
      .filter((at) => at >= restartStarted && at <= restartEnded)
      .sort((a, b) => a - b);
    const longestPauseMs = Math.max(
      ...during.slice(1).map((at, i) => at - during[i]),
      during[0] - restartStarted,
      restartEnded - during[during.length - 1],
    );
    const figures = {
      acceptedEventsPerSecond: (accepted.length * 1000) / (publishEnded - publishStarted),
      endpoints: FIFO_ENDPOINTS + PLAIN_ENDPOINTS,
      offeredDeliveriesPerSecond:
        (accepted.length * (FIFO_ENDPOINTS + PLAIN_ENDPOINTS) * 1000) /
        (publishEnded - publishStarted),
      deliveriesPerSecond: { oneDispatcher, threeDispatchers },
      rollingRestart: { seconds: (restartEnded - restartStarted) / 1000, longestPauseMs },
      accepted: accepted.length,
      duplicates: receiver.requests.length - delivered(),
    };
    mkdirSync(join(ROOT, '.data'), { recursive: true });
    writeFileSync(join(ROOT, '.data', 'scale-out-figures.json'), JSON.stringify(figures, null, 2));
    console.log(`scale-out figures: ${JSON.stringify(figures)}`);

    // FIFO: first deliveries in acceptance order on every FIFO endpoint.
    for (let i = 0; i < FIFO_ENDPOINTS; i++) {
      const seen = new Set<string>();
      const firsts: number[] = [];
      for (const r of receiver.requests.filter((q) => q.path === `/fifo/${i}`)) {
        if (seen.has(r.headers['webhook-id'] as string)) continue;
        seen.add(r.headers['webhook-id'] as string);
        firsts.push((JSON.parse(r.body) as { n: number }).n);
      }
      expect(firsts).toEqual(accepted);
    }
    // Duplicates only from the SIGKILL: what it had in flight (each FIFO lane's head and the one
    // before it whose success was still being written; each plain endpoint's concurrency).
    const duplicates = receiver.requests.length - delivered();
    expect(duplicates).toBeLessThanOrEqual(
      2 * FIFO_ENDPOINTS + ENDPOINT_CONCURRENCY * PLAIN_ENDPOINTS,
    );
    // The message log agrees: nothing left unfinished.
    const unfinished = await apiNow.get(`${org}/messages?status=pending&limit=10`);
    expect(unfinished.body.data).toEqual([]);
  }, 900_000);
});
