import {
  ApiClient,
  createTenant,
  HookbaseProcess,
  pollUntil,
  RunningStack,
  spawnHookbase,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/** The dispatcher group's total lag on the deliveries topic, as `/metrics` at `url` reports it. */
async function dispatcherLag(url: string, topicPrefix: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const lines = text
    .split('\n')
    .filter((line) =>
      line.startsWith(
        `hookbase_consumer_lag{group="${topicPrefix}.dispatcher",topic="${topicPrefix}.deliveries",`,
      ),
    );
  if (lines.length === 0) return undefined;
  return lines.reduce((total, line) => total + Number(line.split(' ').at(-1)), 0);
}

/**
 * `hookbase_consumer_lag` follows the dispatcher's group: with no dispatcher running, messages the
 * fan-out writes pile up as lag (seen from another process's /metrics); once a dispatcher runs
 * and delivers them, the lag is back to 0.
 */
describe('metrics: consumer lag while the dispatcher is stopped', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  const started: HookbaseProcess[] = [];

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack();
  });

  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop()));
    await stack?.stop();
    await receiver.stop();
  });

  it('goes up while no dispatcher runs and back to 0 after', async () => {
    const { organizationId, apiKey, client } = await createTenant(stack.url, stack.adminToken);
    await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      url: `${receiverUrl}/lag`,
    });
    // From here on: ingest and fan-out, no dispatcher (the standalone process ran one).
    await stack.process.stop();
    const env = { ...stack.process.env, PORT: '0', HOOKBASE_GRPC_PORT: '-1' };
    const ingest = await spawnHookbase('ingest', env);
    started.push(ingest.process);
    started.push((await spawnHookbase('fanout', env)).process);
    const ingestUrl = ingest.url!;
    const ingestClient = new ApiClient(ingestUrl, apiKey);
    for (let n = 0; n < 5; n++) {
      expect(
        (await ingestClient.post('/v1/events', { eventType: 'lag', payload: { n } })).status,
      ).toBe(202);
    }
    await pollUntil(async () => (await dispatcherLag(ingestUrl, stack.topicPrefix)) === 5, {
      timeoutMs: 30_000,
      description: 'the dispatcher group 5 records behind',
    });
    expect(receiver.requests).toHaveLength(0);

    started.push((await spawnHookbase('dispatcher', env)).process);
    await pollUntil(() => receiver.requests.length === 5, {
      timeoutMs: 60_000,
      description: 'the 5 messages delivered once a dispatcher runs',
    });
    await pollUntil(async () => (await dispatcherLag(ingestUrl, stack.topicPrefix)) === 0, {
      timeoutMs: 30_000,
      description: 'the dispatcher group caught up (lag 0)',
    });
  });
});
