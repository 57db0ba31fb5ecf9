import { ApiClient, createTenant, pollUntil, TestReceiver } from '@hookbase/testing';
import { laneSuite, seeded } from './lane-suite';

const EVENTS = 2_000;
const FAILURE_RATE = 0.2;

/**
 * The FIFO promise end to end: events sent one after another reach a FIFO endpoint in the order
 * they were accepted, although the receiver fails a random fifth of the requests; the only gaps
 * are messages that used up their attempts and are in the DLQ.
 */
describe('FIFO ordering', () => {
  const random = seeded(20261130);
  const suite = laneSuite(() => (random() < FAILURE_RATE ? { status: 503 } : { status: 200 }));

  it(`delivers ${EVENTS} events sent one after another in send order, with gaps only for the DLQ`, async () => {
    const { stack, receiver, receiverUrl } = suite;
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/ordered`,
      fifoEnabled: true,
      retry: { delaysMs: [0, 10, 20, 40, 80], maxAgeMs: 600_000 },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.fifoEnabled).toBe(true);
    const endpointId: string = created.body.data.id;

    for (let n = 0; n < EVENTS; n++) {
      const sent = await client.post('/v1/events', { eventType: 'seq', payload: { n } });
      expect(sent.status).toBe(202);
    }

    const dlqCount = async () => dlqOf(client, org, endpointId);
    const firstSeen = await pollUntil(
      async () => {
        const seen = firstSeenOrder(receiver);
        const dead = await dlqCount();
        return seen.length + dead.length === EVENTS ? { seen, dead } : undefined;
      },
      {
        timeoutMs: 150_000,
        intervalMs: 500,
        description: 'every event delivered or dead-lettered',
      },
    );
    const deadSeqs = new Set(firstSeen.dead);
    // First-seen order is the send order, skipping exactly the dead-lettered ones.
    const expected = Array.from({ length: EVENTS }, (_, n) => n).filter((n) => !deadSeqs.has(n));
    expect(firstSeen.seen).toEqual(expected);
    // The receiver's failures really happened: ordering held through retries.
    const attempts = receiver.requests.filter((r) => r.path === '/ordered').length;
    expect(attempts).toBeGreaterThan(EVENTS * 1.1);
    const state = (await client.get(`${org}/webhook-endpoints/${endpointId}/fifo-state`)).body.data;
    expect(state).toMatchObject({ fifoEnabled: true, state: 'idle', queueDepth: 0, head: null });
  });

  it('delivers the events of batches sent one after another in the order given, keyed ones included', async () => {
    const { stack, receiver, receiverUrl } = suite;
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/batched`,
      fifoEnabled: true,
      retry: { delaysMs: [0, 10, 20, 40, 80], maxAgeMs: 600_000 },
    });
    expect(created.status).toBe(201);
    const endpointId: string = created.body.data.id;
    const BATCHES = 3;
    const PER_BATCH = 100;
    for (let b = 0; b < BATCHES; b++) {
      const events = Array.from({ length: PER_BATCH }, (_, i) => ({
        eventType: 'seq',
        payload: { n: b * PER_BATCH + i },
        // Some with a key: they keep their place in the batch too.
        ...(i % 10 === 3 ? { idempotencyKey: `batch-${b}-${i}` } : {}),
      }));
      expect((await client.post('/v1/events/batch', { events })).status).toBe(207);
    }
    const total = BATCHES * PER_BATCH;
    const firstSeen = await pollUntil(
      async () => {
        const seen = firstSeenOrder(receiver, '/batched');
        const dead = await dlqOf(client, org, endpointId);
        return seen.length + dead.length === total ? { seen, dead } : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'every batched event delivered' },
    );
    const deadSeqs = new Set(firstSeen.dead);
    expect(firstSeen.seen).toEqual(
      Array.from({ length: total }, (_, n) => n).filter((n) => !deadSeqs.has(n)),
    );
  });
});

/** Payload `n` of each message the receiver saw at `path`, in the order it first saw each one. */
function firstSeenOrder(receiver: TestReceiver, path = '/ordered'): number[] {
  const seen = new Set<string>();
  const order: number[] = [];
  for (const request of receiver.requests) {
    if (request.path !== path) continue;
    const id = String(request.headers['webhook-id']);
    if (seen.has(id)) continue;
    seen.add(id);
    order.push((JSON.parse(request.body) as { n: number }).n);
  }
  return order;
}

/** The `n` of each dead-lettered message of the endpoint. */
async function dlqOf(client: ApiClient, org: string, endpointId: string): Promise<number[]> {
  const entries: { eventId: string }[] = (
    await client.get(`${org}/dlq?endpointId=${endpointId}&limit=250`)
  ).body.data;
  const ns: number[] = [];
  for (const entry of entries) {
    const event = (await client.get(`${org}/events/${entry.eventId}`)).body.data;
    ns.push(event.payload.n);
  }
  return ns;
}
