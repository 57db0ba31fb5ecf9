import { Client } from 'pg';
import {
  createTenant,
  HookbaseProcess,
  pollUntil,
  RunningStack,
  spawnHookbase,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

// A lane left to its lease would wait a minute: far past what the hand-over is allowed.
const LEASE_MS = 60_000;
const SWEEP_MS = 200;
const DRAIN_MS = 20_000;
const FIFO_ENDPOINTS = 8;
const PLAIN_ENDPOINTS = 2;
const EVENTS = 30;
/** Rounds of EVENTS published at most before the second dispatcher must run lanes. */
const ROUNDS = 4;
const RECEIVER_DELAY_MS = 150;

/** Whether the dispatcher on its own ops port says it is in its consumer group. */
async function ready(opsUrl: string): Promise<boolean> {
  const response = await fetch(`${opsUrl}/health/ready`).catch(() => undefined);
  return response?.status === 200;
}

/**
 * SIGTERM of a dispatcher in the middle of deliveries to a slow receiver: the attempts under way
 * finish and are recorded, offsets are committed, its FIFO lanes are handed back (another
 * dispatcher takes them within seconds, not after the lease), it leaves its group and exits 0.
 * Nothing is lost, nothing finished is delivered again, and every FIFO endpoint sees its messages
 * in order.
 */
describe('a dispatcher stopped with SIGTERM mid-delivery', () => {
  let stack: RunningStack;
  let dispatcher: HookbaseProcess | undefined;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let db: Client;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith(() => ({ status: 200, delayMs: RECEIVER_DELAY_MS }));
    stack = await startStack({
      HOOKBASE_FIFO_LEASE_MS: String(LEASE_MS),
      HOOKBASE_FIFO_SWEEP_MS: String(SWEEP_MS),
      HOOKBASE_KAFKA_SESSION_TIMEOUT_MS: '6000',
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await dispatcher?.kill();
    await db?.end();
    await stack?.stop();
    await receiver.stop();
  });

  it('finishes what it started, hands its lanes over at once and exits 0', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const fifo = new Set<string>();
    for (let i = 0; i < FIFO_ENDPOINTS + PLAIN_ENDPOINTS; i++) {
      const isFifo = i < FIFO_ENDPOINTS;
      const endpoint = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/${isFifo ? 'fifo' : 'plain'}/${i}`,
        fifoEnabled: isFifo,
        eventTypes: ['load'],
      });
      expect(endpoint.status).toBe(201);
      if (isFifo) fifo.add(endpoint.body.data.id);
    }

    // A second dispatcher beside the stack's process; both share the deliveries topic.
    ({ process: dispatcher } = await spawnHookbase('dispatcher', {
      ...stack.process.env,
      HOOKBASE_OPS_PORT: '0',
    }));
    const [, opsUrl] = await dispatcher.waitForLine(/health and metrics on (http:\/\/\S+)/, 30_000);
    await pollUntil(() => ready(opsUrl), {
      timeoutMs: 60_000,
      description: 'the second dispatcher in its consumer group',
    });

    // Stopped while it holds lanes with messages still queued, and deliveries are under way.
    const pid = dispatcher.pid!;
    const heldLanes = async (): Promise<string[]> =>
      (
        await db.query<{ endpoint_id: string }>(
          `SELECT endpoint_id FROM fifo_lanes WHERE owner LIKE $1`,
          [`%/${pid}/%`],
        )
      ).rows.map((row) => row.endpoint_id);
    // Which dispatcher reads an endpoint's messages depends on the partitions each holds when
    // they arrive (a rebalance on a loaded machine can leave the new one none for a while): events
    // go out in rounds until the second dispatcher runs lanes of its own.
    let sent = 0;
    let held: string[] | undefined;
    for (let round = 1; held === undefined; round++) {
      for (let i = 0; i < EVENTS; i++) {
        const published = await client.post('/v1/events', {
          eventType: 'load',
          payload: { n: sent++ },
        });
        expect(published.status).toBe(202);
      }
      const waiting = pollUntil(
        async () => {
          const lanes = await heldLanes();
          return lanes.length > 0 && receiver.requests.length > 0 ? lanes : undefined;
        },
        {
          timeoutMs: 15_000,
          description: `the second dispatcher running FIFO lanes after ${sent} events`,
        },
      );
      if (round === ROUNDS) {
        held = await waiting.catch((error: Error) => {
          throw new Error(`${error.message}\n${dispatcher!.logs(60)}`);
        });
      } else {
        held = await waiting.catch(() => undefined);
      }
    }
    const expected = sent * (FIFO_ENDPOINTS + PLAIN_ENDPOINTS);
    const stopStarted = Date.now();
    const exitCode = await dispatcher.stop(DRAIN_MS + 20_000);
    const exitedAt = Date.now();
    const stopLog = dispatcher.logs(400);
    expect({ exitCode, log: exitCode === 0 ? '' : stopLog }).toEqual({ exitCode: 0, log: '' });
    expect(exitedAt - stopStarted).toBeLessThan(DRAIN_MS + 5_000);
    expect(stopLog).toMatch(/handed back \d+ FIFO lanes/);
    expect(stopLog).not.toMatch(/keep their lease/);
    // No lane is left to its lease.
    expect(await heldLanes()).toEqual([]);

    const distinct = () => new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size;
    await pollUntil(() => distinct() >= expected, {
      timeoutMs: 120_000,
      description: `all ${expected} messages received`,
    });

    // The lanes it held and that still had messages were taken over within seconds.
    for (const endpointId of held) {
      const index = (await client.get(`${org}/webhook-endpoints/${endpointId}`)).body.data.url
        .split('/')
        .pop();
      const after = receiver.requests.filter(
        (r) => r.path === `/fifo/${index}` && r.receivedAt >= exitedAt,
      );
      if (after.length > 0) expect(after[0].receivedAt - exitedAt).toBeLessThan(15_000);
    }

    // Nothing delivered twice: the attempts under way at the SIGTERM finished and were recorded.
    const perMessage = new Map<string, number>();
    for (const request of receiver.requests) {
      const id = request.headers['webhook-id'] as string;
      perMessage.set(id, (perMessage.get(id) ?? 0) + 1);
    }
    // On failure: each message sent twice, with where and when (ms after the SIGTERM) it arrived.
    const sentTwice = [...perMessage.entries()]
      .filter(([, count]) => count > 1)
      .map(([id]) =>
        receiver.requests
          .filter((r) => r.headers['webhook-id'] === id)
          .map((r) => `${r.path} +${r.receivedAt - stopStarted}`),
      );
    expect(sentTwice).toEqual([]);
    expect(receiver.requests).toHaveLength(expected);

    // First deliveries in send order on every FIFO endpoint.
    for (let i = 0; i < FIFO_ENDPOINTS; i++) {
      const order = receiver.requests
        .filter((r) => r.path === `/fifo/${i}`)
        .map((r) => (JSON.parse(r.body) as { n: number }).n);
      expect(order).toEqual(Array.from({ length: sent }, (_, n) => n));
    }
    expect(fifo.size).toBe(FIFO_ENDPOINTS);
  });
});
