import { Metadata, ServiceError, status } from '@grpc/grpc-js';
import { connect, Socket } from 'node:net';
import {
  connectGrpcIngest,
  createTenant,
  GrpcIngestClient,
  pollUntil,
  RunningStack,
  startStack,
} from '@hookbase/testing';

/* eslint-disable @typescript-eslint/no-explicit-any -- responses are read loosely, asserted by value */

/** Room for one of the bodies below in flight, not two. */
const IN_FLIGHT_BODY_BYTES = 100_000;

/** An event whose JSON body is `bytes` long. */
function eventBody(bytes: number, name: string): string {
  const event = { eventType: 'body.budget', payload: { name, pad: '' } };
  event.payload.pad = 'x'.repeat(bytes - JSON.stringify(event).length);
  return JSON.stringify(event);
}

/**
 * A process serves at most HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES of request bodies at once, over HTTP
 * and gRPC together: a request beyond them is answered 503 with Retry-After before its body is
 * read (a gRPC call UNAVAILABLE with a retry-after trailer), and the ones in flight go on. Here a client holds a 60 KB request open (headers and most of its body sent, the rest
 * later), so that a second one of 50 KB would pass the budget.
 */
describe('request bodies in flight', () => {
  let stack: RunningStack;
  let grpc: GrpcIngestClient;
  let held: Socket | undefined;

  beforeAll(async () => {
    stack = await startStack({
      HOOKBASE_GRPC_PORT: '0',
      HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES: String(IN_FLIGHT_BODY_BYTES),
    });
    grpc = await connectGrpcIngest(stack.process);
  });

  afterAll(async () => {
    held?.destroy();
    grpc?.close();
    await stack?.stop();
  });

  /** A gRPC PublishBatch of one event: its answer, or the error it ended with. */
  const publishBatchOverGrpc = (apiKey: string, payloadJson: string) =>
    new Promise<{ value?: any; error?: ServiceError }>((resolve) => {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${apiKey}`);
      grpc.PublishBatch(
        { events: [{ event_type: 'body.budget', payload_json: payloadJson }] },
        metadata,
        { deadline: Date.now() + 20_000 },
        (error: ServiceError | null, value: any) => resolve(error ? { error } : { value }),
      );
    });

  it('answers 503 with Retry-After to a body beyond the budget, and takes it once the others are answered', async () => {
    const { organizationId, apiKey, client } = await createTenant(
      stack.url,
      stack.adminToken,
      'pro',
    );
    const org = `/api/organizations/${organizationId}`;
    const publishRaw = (body: string) =>
      client.request('POST', '/v1/events', undefined, { rawBody: body });
    const metric = async (name: string) => {
      const text = await (await fetch(`${stack.url}/metrics`)).text();
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    };
    const first = eventBody(60_000, 'first');
    const { hostname, port } = new URL(stack.url);
    const socket = connect(Number(port), hostname);
    held = socket;
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.write(
      [
        'POST /v1/events HTTP/1.1',
        `Host: ${hostname}:${port}`,
        `Authorization: Bearer ${apiKey}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(first)}`,
        '',
        first.slice(0, -100),
      ].join('\r\n'),
    );

    const second = eventBody(50_000, 'second');
    // The held request counts from its arrival: its declared bytes show in the gauge.
    await pollUntil(async () => (await metric('hookbase_http_in_flight_body_bytes')) === 60_000, {
      timeoutMs: 10_000,
      description: 'the held request in flight',
    });
    const refused = await publishRaw(second);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.any(String),
      details: { reason: 'request_bodies_in_flight' },
    });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await metric('hookbase_http_bodies_refused_total')).toBe(1);
    // A gRPC call counts with them, by its message's size.
    const largeJson = JSON.stringify({ name: 'grpc', pad: 'y'.repeat(50_000) });
    const grpcRefused = await publishBatchOverGrpc(apiKey, largeJson);
    expect(grpcRefused.error?.code).toBe(status.UNAVAILABLE);
    expect(grpcRefused.error?.metadata.get('hookbase-error-code')).toEqual(['SERVICE_UNAVAILABLE']);
    expect(grpcRefused.error?.metadata.get('retry-after')).toEqual(['1']);
    expect(await metric('hookbase_http_bodies_refused_total')).toBe(2);
    // A request without a body, and a small one that fits beside it, are served meanwhile.
    expect((await client.get(org)).status).toBe(200);
    const small = await client.post('/v1/events', { eventType: 'body.budget', payload: {} });
    expect(small.status).toBe(202);
    expect(answer).toBe('');

    // The held request is finished and answered: the second body is taken again.
    socket.write(first.slice(-100));
    await pollUntil(() => answer.startsWith('HTTP/1.1 202') || undefined, {
      timeoutMs: 10_000,
      description: 'the held request answered',
    });
    const again = await publishRaw(second);
    expect(again.status).toBe(202);
    const grpcAgain = await publishBatchOverGrpc(apiKey, largeJson);
    expect(grpcAgain.value?.results).toEqual([
      { result: 'event', event: expect.objectContaining({ duplicate: false }) },
    ]);
    await pollUntil(async () => (await metric('hookbase_http_in_flight_body_bytes')) === 0, {
      timeoutMs: 10_000,
      description: 'every body given back after its answer',
    });
    // Both bodies were stored as sent.
    for (const [response, name] of [
      [JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), 'first'],
      [again.body, 'second'],
    ] as const) {
      const event = await pollUntil(
        async () => {
          const read = await client.get(`${org}/events/${(response as any).data.id}`);
          return read.status === 200 ? read : undefined;
        },
        { timeoutMs: 10_000, description: `the ${name} event recorded` },
      );
      expect(event.body.data.payload.name).toBe(name);
    }
  });
});
