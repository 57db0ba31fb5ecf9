import { Kafka, logLevel } from 'kafkajs';
import { newId } from '@hookbase/domain';
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  spawnHookbase,
  startStack,
  TestReceiver,
  testEnvironment,
} from '@hookbase/testing';

/** One sample of the Prometheus text format: name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]] = pair[2];
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `labels`. */
function sum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);
}

/**
 * Known traffic through the real stack (successes, 503s that are retried, one message
 * dead-lettered, refused events), then `GET /metrics`: each counter equals what happened, as the
 * message log (the ledger) records it.
 */
describe('metrics: scraped counters equal what happened', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack({ HOOKBASE_RETRY_POLL_MS: '100' });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  async function scrape(): Promise<Sample[]> {
    const response = await fetch(`${stack.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await response.text());
  }

  it('counts events, fan-out, attempts by kind and outcome, and dead letters', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const retry = { delaysMs: [0, 200], maxAgeMs: 60_000 };
    const endpoint = async (path: string) =>
      (await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}${path}`, retry })).body
        .data.id as string;
    const ok = await endpoint('/ok');
    const flaky = await endpoint('/flaky');
    const broken = await endpoint('/broken');
    const seen = new Map<string, number>();
    receiver.respondWith((request) => {
      const body = JSON.parse(request.body) as { n: number };
      const key = `${request.path}:${body.n}`;
      const times = (seen.get(key) ?? 0) + 1;
      seen.set(key, times);
      if (request.path === '/ok') return { status: 200 };
      if (request.path === '/flaky') return { status: times === 1 ? 503 : 204 };
      return { status: 503 };
    });

    const publish = (endpointId: string, n: number) =>
      client.post('/v1/events', {
        eventType: 'metered',
        payload: { n },
        endpointIds: [endpointId],
      });
    for (const n of [1, 2, 3]) expect((await publish(ok, n)).status).toBe(202);
    for (const n of [4, 5]) expect((await publish(flaky, n)).status).toBe(202);
    expect((await publish(broken, 6)).status).toBe(202);
    // Refused: one REST event without a type; a batch of two good events and one bad.
    expect((await client.post('/v1/events', { payload: {} })).status).toBe(400);
    const batch = await client.post('/v1/events/batch', {
      events: [
        { eventType: 'metered', payload: { n: 7 }, endpointIds: [ok] },
        { eventType: 'metered', payload: { n: 8 }, endpointIds: [ok] },
        { payload: {} },
      ],
    });
    expect(batch.body.data.map((r: { status: number }) => r.status)).toEqual([202, 202, 400]);

    // The ledger: every message settled (8 messages: 5 to ok, 2 to flaky, 1 to broken).
    const messages = await pollUntil(
      async () => {
        const page = await client.get(`${org}/messages?limit=250`);
        const settled = page.body.data.filter(
          (m: { status: string }) => m.status === 'succeeded' || m.status === 'failed',
        );
        return page.body.data.length === 8 && settled.length === 8 ? page.body.data : undefined;
      },
      { timeoutMs: 60_000, description: 'all 8 messages succeeded or failed' },
    );
    const attempts = (
      await Promise.all(
        messages.map(
          async (m: { id: string }) =>
            (await client.get(`${org}/messages/${m.id}`)).body.data.attemptHistory as {
              outcome: string;
              responseStatus: number | null;
            }[],
        ),
      )
    ).flat();
    const ledger = (outcome: string, statusClass: string) =>
      attempts.filter(
        (a) =>
          a.outcome === outcome && `${Math.floor((a.responseStatus ?? 0) / 100)}xx` === statusClass,
      ).length;
    // What the script above makes happen, as recorded: 5 + 2 successes, 2 + 2 answers of 503.
    expect(ledger('succeeded', '2xx')).toBe(7);
    expect(ledger('retry', '5xx')).toBe(4);
    expect(attempts).toHaveLength(11);
    expect(messages.filter((m: { status: string }) => m.status === 'failed')).toHaveLength(1);

    // The dead letter is counted once the dispatcher sent it, before its status: poll for it.
    const samples = await pollUntil(
      async () => {
        const scraped = await scrape();
        return sum(scraped, 'hookbase_attempts_total') === 11 ? scraped : undefined;
      },
      { timeoutMs: 10_000, description: '11 attempts counted' },
    );
    expect(sum(samples, 'hookbase_events_accepted_total', { surface: 'rest' })).toBe(6);
    expect(sum(samples, 'hookbase_events_accepted_total', { surface: 'batch' })).toBe(2);
    expect(
      sum(samples, 'hookbase_events_refused_total', {
        surface: 'rest',
        reason: 'VALIDATION_FAILED',
      }),
    ).toBe(1);
    expect(
      sum(samples, 'hookbase_events_refused_total', {
        surface: 'batch',
        reason: 'VALIDATION_FAILED',
      }),
    ).toBe(1);
    expect(sum(samples, 'hookbase_publish_duration_seconds_count', { outcome: 'acked' })).toBe(8);
    expect(sum(samples, 'hookbase_fanout_events_total')).toBe(8);
    expect(sum(samples, 'hookbase_fanout_messages_total')).toBe(8);
    expect(
      sum(samples, 'hookbase_attempts_total', {
        kind: 'http',
        outcome: 'succeeded',
        status_class: '2xx',
      }),
    ).toBe(ledger('succeeded', '2xx'));
    expect(
      sum(samples, 'hookbase_attempts_total', {
        kind: 'http',
        outcome: 'retry',
        status_class: '5xx',
      }),
    ).toBe(ledger('retry', '5xx'));
    expect(sum(samples, 'hookbase_attempt_duration_seconds_count', { kind: 'http' })).toBe(11);
    expect(sum(samples, 'hookbase_messages_dead_lettered_total', { reason: 'max_attempts' })).toBe(
      1,
    );
    expect(sum(samples, 'hookbase_messages_dead_lettered_total')).toBe(1);
    // Bounded labels: no endpoint id unless turned on, never an event id or a URL.
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    for (const id of [ok, flaky, broken, receiverUrl]) expect(text).not.toContain(id);
    expect(text).not.toMatch(/evt_/);
    // Gauges measured at scrape time, and Node's process metrics.
    expect(samples.some((s) => s.name === 'hookbase_db_pool_connections')).toBe(true);
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
    const lag = samples.filter(
      (s) =>
        s.name === 'hookbase_consumer_lag' && s.labels.group === `${stack.topicPrefix}.dispatcher`,
    );
    expect(lag.length).toBeGreaterThan(0);
    expect(lag.every((s) => s.labels.topic === `${stack.topicPrefix}.deliveries`)).toBe(true);
  });

  it('counts events that direct Kafka producers write: accepted as surface kafka, refused by reason', async () => {
    receiver.respondWith(() => ({ status: 200 }));
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/direct`,
    });
    expect(created.status).toBe(201);
    const before = await scrape();
    const counted = (samples: Sample[], name: string, labels: Record<string, string>) =>
      sum(samples, name, labels) - sum(before, name, labels);

    const envelope = (organization: string, n: number) =>
      JSON.stringify({
        id: newId('evt'),
        organizationId: organization,
        eventType: 'direct',
        payload: { n },
        acceptedAt: new Date().toISOString(),
      });
    const kafka = new Kafka({
      clientId: 'metrics-direct-producer',
      brokers: testEnvironment().kafkaBrokers.split(','),
      logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({
        topic: `${stack.topicPrefix}.events`,
        acks: -1,
        messages: [
          { key: organizationId, value: envelope(organizationId, 1) },
          { key: organizationId, value: envelope(organizationId, 2) },
          { key: organizationId, value: 'not json{' },
          { key: organizationId, value: envelope(newId('org'), 3) },
        ],
      });
    } finally {
      await producer.disconnect();
    }
    // One REST event beside them: counted by ingest (rest), not a second time by the fan-out.
    expect(
      (
        await client.post('/v1/events', {
          eventType: 'direct',
          payload: { n: 4 },
          endpointIds: [created.body.data.id],
        })
      ).status,
    ).toBe(202);

    // The ledger: the two valid direct events and the REST one, each delivered.
    const messages = await pollUntil(
      async () => {
        const page = await client.get(`${org}/messages?limit=250`);
        const done = page.body.data.filter((m: { status: string }) => m.status === 'succeeded');
        return done.length === 3 ? page.body.data : undefined;
      },
      { timeoutMs: 30_000, description: 'the 3 messages of the organization delivered' },
    );
    expect(messages).toHaveLength(3);
    const admin = new ApiClient(stack.url, stack.adminToken);
    const invalid = await pollUntil(
      async () => {
        const page = await admin.get('/api/invalid-events');
        const ours = page.body.data.filter((e: { topic: string }) =>
          e.topic.startsWith(stack.topicPrefix),
        );
        return ours.length === 2 ? ours : undefined;
      },
      { timeoutMs: 30_000, description: 'the 2 refused direct records set aside' },
    );
    expect(invalid).toHaveLength(2);

    const samples = await pollUntil(
      async () => {
        const scraped = await scrape();
        return counted(scraped, 'hookbase_events_accepted_total', { surface: 'kafka' }) >= 2
          ? scraped
          : undefined;
      },
      { timeoutMs: 10_000, description: 'the direct events counted' },
    );
    expect(counted(samples, 'hookbase_events_accepted_total', { surface: 'kafka' })).toBe(2);
    expect(counted(samples, 'hookbase_events_accepted_total', { surface: 'rest' })).toBe(1);
    expect(
      counted(samples, 'hookbase_events_refused_total', {
        surface: 'kafka',
        reason: 'invalid_record',
      }),
    ).toBe(1);
    expect(
      counted(samples, 'hookbase_events_refused_total', {
        surface: 'kafka',
        reason: 'unknown_organization',
      }),
    ).toBe(1);
    expect(counted(samples, 'hookbase_fanout_events_total', {})).toBe(3);
  });

  it('reports FIFO lanes by state and the retry schedule from the store', async () => {
    receiver.respondWith(() => ({ status: 200 }));
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/fifo`,
      fifoEnabled: true,
    });
    expect(created.status).toBe(201);
    const endpointId: string = created.body.data.id;
    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'paused' });
    for (const n of [1, 2]) {
      const published = await client.post('/v1/events', {
        eventType: 'laned',
        payload: { n },
        endpointIds: [endpointId],
      });
      expect(published.status).toBe(202);
    }
    const samples = await pollUntil(
      async () => {
        const scraped = await scrape();
        const blocked = sum(scraped, 'hookbase_fifo_lanes', {
          state: 'blocked',
          reason: 'endpoint_paused',
        });
        return blocked === 1 ? scraped : undefined;
      },
      { timeoutMs: 30_000, description: 'one FIFO lane blocked by its paused endpoint' },
    );
    expect(sum(samples, 'hookbase_fifo_lanes', { state: 'running' })).toBe(0);
    expect(sum(samples, 'hookbase_fifo_oldest_queued_age_seconds')).toBeGreaterThan(0);
    // Everything of the first test was delivered or dead-lettered: nothing is due for a retry.
    expect(sum(samples, 'hookbase_retries_scheduled', { state: 'due' })).toBe(0);
    expect(sum(samples, 'hookbase_retries_scheduled', { state: 'overdue' })).toBe(0);

    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'active' });
    await pollUntil(
      async () => {
        const scraped = await scrape();
        return sum(scraped, 'hookbase_fifo_lanes') === 0 &&
          sum(scraped, 'hookbase_fifo_oldest_queued_age_seconds') === 0
          ? scraped
          : undefined;
      },
      { timeoutMs: 30_000, description: 'the lane drained once its endpoint is active' },
    );
  });
  it('serves no metrics with HOOKBASE_METRICS=false, on HTTP and on a worker, and still works', async () => {
    receiver.respondWith(() => ({ status: 200 }));
    const off = await stack.startAnother({ HOOKBASE_METRICS: 'false' });
    const worker = await spawnHookbase('dispatcher', {
      ...stack.process.env,
      HOOKBASE_METRICS: 'false',
      HOOKBASE_OPS_PORT: '0',
    });
    try {
      const [, opsUrl] = await worker.process.waitForLine(
        /health and metrics on (http:\/\/\S+)/,
        10_000,
      );
      for (const url of [off.url, opsUrl]) {
        const scraped = await new ApiClient(url).get('/metrics');
        expect(scraped.status).toBe(404);
        expect(scraped.body.error.code).toBe('ROUTE_NOT_FOUND');
        expect(scraped.body.error.message).toContain('HOOKBASE_METRICS=false');
        expect((await new ApiClient(url).get('/health/live')).status).toBe(200);
      }
      // Counting nothing does not stop the work: an event published through it is delivered.
      const { organizationId, client } = await createTenant(off.url, stack.adminToken);
      const created = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
        url: `${receiverUrl}/unmetered`,
      });
      expect(created.status).toBe(201);
      const published = await client.post('/v1/events', {
        eventType: 'unmetered',
        payload: { n: 1 },
        endpointIds: [created.body.data.id],
      });
      expect(published.status).toBe(202);
      await pollUntil(async () => receiver.requests.find((r) => r.path === '/unmetered'), {
        timeoutMs: 30_000,
        description: 'the event published with metrics off delivered',
      });
    } finally {
      await worker.process.stop();
      await off.process.stop();
    }
  });
});
