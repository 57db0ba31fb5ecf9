import { Client } from 'pg';
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/**
 * A FIFO queue's blocked episode outlives the dispatcher that began it: the process is killed
 * after its sweep has started the episode, and the process that follows reports that same episode
 * (its `blockedSince` from before the kill) once, past the threshold.
 */
describe('a FIFO blocked episode across a restart', () => {
  const ops = new TestReceiver();
  let stack: RunningStack;
  let opsUrl: string;

  beforeAll(async () => {
    opsUrl = await ops.start();
    stack = await startStack({
      HOOKBASE_OPERATIONAL_FIFO_BLOCKED_AFTER: '6s',
      HOOKBASE_FIFO_BLOCKED_SWEEP_MS: '200',
      HOOKBASE_OPERATIONAL_RELAY_MS: '200',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await ops.stop();
  });

  const episodeSince = async (endpointId: string): Promise<Date | null> => {
    const client = new Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT episode_since FROM fifo_lanes WHERE endpoint_id = $1',
        [endpointId],
      );
      return rows[0]?.episode_since ?? null;
    } finally {
      await client.end();
    }
  };

  it('reports the episode begun before the kill, once', async () => {
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${pro.organizationId}`;
    const opsEndpoint = await pro.client.post(`${org}/operational-webhook-endpoints`, {
      url: `${opsUrl}/ops`,
      eventTypes: ['fifo.queue.blocked'],
    });
    expect(opsEndpoint.status).toBe(201);
    const created = await pro.client.post(`${org}/webhook-endpoints`, {
      url: `${opsUrl}/customer`,
      fifoEnabled: true,
      status: 'paused',
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect(
      (
        await pro.client.post('/v1/events', {
          eventType: 'order.created',
          payload: {},
          endpointIds: [id],
        })
      ).status,
    ).toBe(202);
    const since = await pollUntil(() => episodeSince(id), {
      description: 'the episode started by the first process',
    });
    await stack.process.kill();
    const next = await stack.startAnother();
    const client = new ApiClient(next.url, pro.apiKey);
    expect((await client.get(`${org}/webhook-endpoints/${id}`)).status).toBe(200);
    const blocked = await pollUntil(
      () =>
        ops.requests
          .map((r) => JSON.parse(r.body))
          .find((e) => e.type === 'fifo.queue.blocked' && e.data.endpointId === id),
      { description: 'fifo.queue.blocked from the next process', timeoutMs: 60_000 },
    );
    expect(blocked.data.state).toMatchObject({ blockedReason: 'paused' });
    expect(new Date(blocked.data.state.blockedSince).getTime()).toBe(since.getTime());
    expect(
      ops.requests.filter((r) => r.path === '/ops' && r.body.includes('fifo.queue.blocked')),
    ).toHaveLength(1);
  });
});
