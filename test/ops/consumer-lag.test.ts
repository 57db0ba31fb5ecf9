import {
  ApiClient,
  createTenant,
  HookbaseProcess,
  metricSamples,
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
 * and delivers them, the lag is back to 0. Beside it, each process reports the partitions its
 * consumers hold (`hookbase_consumer_assigned_partitions`) and each topic's partition count, which
 * the "partition without a consumer" alert compares.
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
    const deliveries = `topic="${stack.topicPrefix}.deliveries"`;
    const partitions = await pollUntil(
      async () => (await metricSamples(stack.url, 'hookbase_topic_partitions')).get(deliveries),
      { timeoutMs: 10_000, description: 'the deliveries topic partition count reported' },
    );
    expect(partitions).toBeGreaterThan(0);
    // The standalone process runs every consumer: it holds every partition of each topic.
    const held = await pollUntil(
      async () => {
        const now = await metricSamples(stack.url, 'hookbase_consumer_assigned_partitions');
        return now.get(`group="${stack.topicPrefix}.dispatcher",${deliveries}`) === partitions
          ? now
          : undefined;
      },
      { timeoutMs: 30_000, description: 'the standalone dispatcher holding every partition' },
    );
    expect(held.size).toBe(3);

    // From here on: ingest and fan-out, no dispatcher (the standalone process ran one).
    await stack.process.stop();
    const env = { ...stack.process.env, PORT: '0', HOOKBASE_GRPC_PORT: '-1' };
    const ingest = await spawnHookbase('ingest', env);
    started.push(ingest.process);
    const fanout = await spawnHookbase('fanout', { ...env, HOOKBASE_OPS_PORT: '0' });
    started.push(fanout.process);
    const [, fanoutUrl] = await fanout.process.waitForLine(
      /health and metrics on (http:\/\/\S+)/,
      10_000,
    );
    // No process holds a partition of the deliveries topic now: the fan-out holds its own only.
    const fanoutHeld = await pollUntil(
      async () => {
        const now = await metricSamples(fanoutUrl, 'hookbase_consumer_assigned_partitions');
        return [...now.values()].some((n) => n > 0) ? now : undefined;
      },
      { timeoutMs: 30_000, description: 'the fan-out holding its partitions' },
    );
    expect([...fanoutHeld.keys()]).toEqual([
      `group="${stack.topicPrefix}.fanout",topic="${stack.topicPrefix}.events"`,
    ]);
    expect((await metricSamples(ingest.url!, 'hookbase_consumer_assigned_partitions')).size).toBe(
      0,
    );
    expect((await metricSamples(ingest.url!, 'hookbase_topic_partitions')).get(deliveries)).toBe(
      partitions,
    );
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

    const dispatcher = await spawnHookbase('dispatcher', { ...env, HOOKBASE_OPS_PORT: '0' });
    started.push(dispatcher.process);
    const [, dispatcherUrl] = await dispatcher.process.waitForLine(
      /health and metrics on (http:\/\/\S+)/,
      10_000,
    );
    await pollUntil(() => receiver.requests.length === 5, {
      timeoutMs: 60_000,
      description: 'the 5 messages delivered once a dispatcher runs',
    });
    await pollUntil(async () => (await dispatcherLag(ingestUrl, stack.topicPrefix)) === 0, {
      timeoutMs: 30_000,
      description: 'the dispatcher group caught up (lag 0)',
    });
    // The dispatcher that joined holds every partition of the deliveries topic again.
    expect(
      (await metricSamples(dispatcherUrl, 'hookbase_consumer_assigned_partitions')).get(
        `group="${stack.topicPrefix}.dispatcher",${deliveries}`,
      ),
    ).toBe(partitions);
  });
});
