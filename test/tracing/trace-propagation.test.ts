import { randomBytes } from 'node:crypto';
import { Metadata, ServiceError } from '@grpc/grpc-js';
import {
  connectGrpcIngest,
  createTenant,
  emulatorAwsCredentials,
  GrpcIngestClient,
  OtlpReceiver,
  pollUntil,
  ReceivedSpan,
  RunningStack,
  startStack,
  TestReceiver,
  unusedPort,
} from '@hookbase/testing';

/**
 * Traces from publish to attempt: a caller's W3C `traceparent` (REST or gRPC) is continued by the
 * publish span, the fan-out span is its child (through the events topic's record headers), and
 * every attempt is a child of the fan-out (through the deliveries topic for first attempts, the
 * store for retries and FIFO lanes). Spans go over OTLP/HTTP to a collector in this process.
 */
describe('OpenTelemetry traces', () => {
  let stack: RunningStack;
  let grpc: GrpcIngestClient;
  const collector = new OtlpReceiver();
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    const collectorUrl = await collector.start();
    receiverUrl = await receiver.start();
    // The first request to each path ending in `-flaky` fails with 503, later ones succeed.
    const seen = new Set<string>();
    receiver.respondWith((request) => {
      const first = !seen.has(request.path);
      seen.add(request.path);
      return request.path.endsWith('-flaky') && first ? { status: 503 } : { status: 200 };
    });
    stack = await startStack({
      OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      HOOKBASE_RETRY_POLL_MS: '100',
    });
    grpc = await connectGrpcIngest(stack.process);
  });

  afterAll(async () => {
    grpc?.close();
    await stack?.stop();
    await receiver.stop();
    await collector.stop();
  });

  /** A caller's own span: the trace the publish must continue. */
  function callerSpan() {
    const traceId = randomBytes(16).toString('hex');
    const spanId = randomBytes(8).toString('hex');
    return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
  }

  const spansOf = (traceId: string, name: string): ReceivedSpan[] =>
    collector.spans.filter((span) => span.traceId === traceId && span.name === name);

  const attemptsAt = (traceId: string, endpointId: string): ReceivedSpan[] =>
    spansOf(traceId, 'attempt')
      .filter((span) => span.attributes['hookbase.endpoint.id'] === endpointId)
      .sort(
        (a, b) =>
          Number(a.attributes['hookbase.attempt.number']) -
          Number(b.attributes['hookbase.attempt.number']),
      );

  it('shows a REST publish, its fan-out and every attempt, retries and FIFO waits included, in the caller trace', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const create = async (path: string, more: Record<string, unknown> = {}) => {
      const created = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
        url: `${receiverUrl}${path}`,
        retry: { delaysMs: [0, 300, 300], maxAgeMs: 60_000 },
        ...more,
      });
      expect(created.status).toBe(201);
      return created.body.data.id as string;
    };
    const steady = await create('/steady');
    const retried = await create('/retried-flaky');
    const ordered = await create('/ordered-flaky', { fifoEnabled: true });
    // Another kind through the same attempt path: an SQS endpoint whose service is not there,
    // with no retry left, so its one attempt dead-letters the message.
    const absentSqs = `http://127.0.0.1:${await unusedPort()}`;
    const queue = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      kind: 'sqs',
      config: {
        region: 'us-east-1',
        queueUrl: `${absentSqs}/000000000000/absent`,
        endpoint: absentSqs,
        credentials: emulatorAwsCredentials(),
      },
      retry: { delaysMs: [0], maxAgeMs: 60_000 },
    });
    expect(queue.status).toBe(201);
    const unreachable: string = queue.body.data.id;

    const caller = callerSpan();
    const published = await client.request(
      'POST',
      '/v1/events',
      { eventType: 'order.created', payload: { n: 1 } },
      { headers: { traceparent: caller.traceparent } },
    );
    expect(published.status).toBe(202);
    const eventId: string = published.body.data.id;

    await pollUntil(
      () =>
        attemptsAt(caller.traceId, steady).length === 1 &&
        attemptsAt(caller.traceId, retried).length === 2 &&
        attemptsAt(caller.traceId, ordered).length === 2 &&
        attemptsAt(caller.traceId, unreachable).length === 1,
      {
        timeoutMs: 60_000,
        description: 'the attempt spans of all four endpoints at the collector',
      },
    );
    expect(collector.refused).toEqual([]);

    const [publish, ...extraPublishes] = spansOf(caller.traceId, 'publish');
    expect(extraPublishes).toEqual([]);
    expect(publish).toMatchObject({
      service: 'hookbase-standalone',
      parentSpanId: caller.spanId,
      attributes: expect.objectContaining({
        'hookbase.event.id': eventId,
        'hookbase.event.type': 'order.created',
        'hookbase.organization.id': organizationId,
      }),
    });

    const [fanout, ...extraFanouts] = spansOf(caller.traceId, 'fan-out');
    expect(extraFanouts).toEqual([]);
    expect(fanout).toMatchObject({
      parentSpanId: publish.spanId,
      attributes: expect.objectContaining({
        'hookbase.event.id': eventId,
        'hookbase.fanout.deliveries': 4,
      }),
    });

    const attempt = (endpointId: string, number: number, status: number, outcome: string) =>
      expect.objectContaining({
        parentSpanId: fanout.spanId,
        statusCode: outcome === 'succeeded' ? 0 : 2,
        attributes: expect.objectContaining({
          'hookbase.endpoint.id': endpointId,
          'hookbase.endpoint.kind': 'http',
          'hookbase.event.id': eventId,
          'hookbase.attempt.number': number,
          'hookbase.response.status': status,
          'hookbase.attempt.outcome': outcome,
        }),
      });
    expect(attemptsAt(caller.traceId, steady)).toEqual([attempt(steady, 1, 200, 'succeeded')]);
    // A retry (from the schedule) and a FIFO lane's next try are attempts of their own, the
    // wait between them a gap between the spans.
    for (const [endpointId, path] of [
      [retried, '/retried-flaky'],
      [ordered, '/ordered-flaky'],
    ]) {
      // The spans tell what was sent: the receiver saw attempt 1 (answered 503), then attempt 2.
      const sent = receiver.requests
        .filter((request) => request.path === path)
        .map((request) => request.headers['hookbase-attempt']);
      if (sent.join() !== '1,2') {
        throw new Error(`${path} received attempts ${sent.join()}:\n${stack.process.logs(200)}`);
      }
      const [first, second] = attemptsAt(caller.traceId, endpointId);
      expect([first, second]).toEqual([
        attempt(endpointId, 1, 503, 'retry'),
        attempt(endpointId, 2, 200, 'succeeded'),
      ]);
      expect(second.attributes['hookbase.message.status']).toBe('succeeded');
      expect(second.startNanos).toBeGreaterThanOrEqual(first.endNanos);
    }
    expect(attemptsAt(caller.traceId, unreachable)).toEqual([
      expect.objectContaining({
        parentSpanId: fanout.spanId,
        statusCode: 2,
        attributes: expect.objectContaining({
          'hookbase.endpoint.kind': 'sqs',
          'hookbase.attempt.number': 1,
          'hookbase.attempt.outcome': 'retry',
          'hookbase.message.status': 'failed',
        }),
      }),
    ]);
    expect(attemptsAt(caller.traceId, unreachable)[0].attributes).not.toHaveProperty(
      'hookbase.response.status',
    );
    // No span of another trace names this event: the whole path is in the caller's trace.
    expect(
      collector.spans.filter(
        (span) =>
          span.attributes['hookbase.event.id'] === eventId && span.traceId !== caller.traceId,
      ),
    ).toEqual([]);
  });

  it('continues a gRPC caller trace from its metadata', async () => {
    const { organizationId, apiKey, client } = await createTenant(stack.url, stack.adminToken);
    const created = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      url: `${receiverUrl}/grpc`,
    });
    expect(created.status).toBe(201);
    const endpointId: string = created.body.data.id;

    const caller = callerSpan();
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${apiKey}`);
    metadata.set('traceparent', caller.traceparent);
    const response = await new Promise<{ id: string }>((resolve, reject) =>
      grpc.Publish(
        { event_type: 'grpc.traced', payload_json: '{"a":1}' },
        metadata,
        { deadline: Date.now() + 20_000 },
        (error: ServiceError | null, value: { id: string }) =>
          error ? reject(error) : resolve(value),
      ),
    );

    await pollUntil(() => attemptsAt(caller.traceId, endpointId).length === 1, {
      timeoutMs: 30_000,
      description: 'the attempt span of the gRPC-published event',
    });
    const [publish] = spansOf(caller.traceId, 'publish');
    expect(publish).toMatchObject({
      parentSpanId: caller.spanId,
      attributes: expect.objectContaining({ 'hookbase.event.id': response.id }),
    });
    const [fanout] = spansOf(caller.traceId, 'fan-out');
    expect(fanout.parentSpanId).toBe(publish.spanId);
    expect(attemptsAt(caller.traceId, endpointId)).toEqual([
      expect.objectContaining({
        parentSpanId: fanout.spanId,
        attributes: expect.objectContaining({
          'hookbase.attempt.number': 1,
          'hookbase.response.status': 200,
          'hookbase.attempt.outcome': 'succeeded',
        }),
      }),
    ]);
  });

  it('gives each event of a REST batch its own publish span in the caller trace, parent of its fan-out', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const created = await client.post(`/api/organizations/${organizationId}/webhook-endpoints`, {
      url: `${receiverUrl}/batch`,
    });
    expect(created.status).toBe(201);
    const endpointId: string = created.body.data.id;

    const caller = callerSpan();
    const published = await client.request(
      'POST',
      '/v1/events/batch',
      { events: [1, 2, 3].map((n) => ({ eventType: 'batch.traced', payload: { n } })) },
      { headers: { traceparent: caller.traceparent } },
    );
    expect(published.status).toBe(207);
    const eventIds: string[] = published.body.data.map(
      (result: { status: number; data: { id: string } }) => result.data.id,
    );
    expect(new Set(eventIds).size).toBe(3);

    await pollUntil(() => attemptsAt(caller.traceId, endpointId).length === 3, {
      timeoutMs: 30_000,
      description: 'the attempt spans of the three batched events',
    });
    const publishes = spansOf(caller.traceId, 'publish');
    expect(publishes.map((span) => span.attributes['hookbase.event.id']).sort()).toEqual(
      [...eventIds].sort(),
    );
    expect(publishes.every((span) => span.parentSpanId === caller.spanId)).toBe(true);
    for (const publish of publishes) {
      const eventId = publish.attributes['hookbase.event.id'];
      const fanouts = spansOf(caller.traceId, 'fan-out').filter(
        (span) => span.attributes['hookbase.event.id'] === eventId,
      );
      expect(fanouts.map((span) => span.parentSpanId)).toEqual([publish.spanId]);
    }
  });
});
