import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import {
  CreateEventBusCommand,
  EventBridgeClient,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { EventBridgeDestinationAdapter, OutboundMessage } from '@hookbase/destinations';
import {
  emulatorAwsCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  unusedPort,
  receiveFromQueue,
} from '@hookbase/testing';

/**
 * The EventBridge adapter against moto's server. What the bus received is read back through a
 * rule on the bus that forwards the events of our source to an SQS queue. A partial failure
 * (`FailedEntryCount`), which moto never produces for a valid entry, comes from a stand-in
 * EventBridge on loopback answering the real wire format.
 */
describe('EventBridgeDestinationAdapter (moto)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  const bus = `hookbase-${run}`;
  const source = `hookbase.test.${run}`;
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let events: EventBridgeClient;
  let sqs: SQSClient;
  let queueUrl: string;
  let adapter: EventBridgeDestinationAdapter;

  const message = (n: number): OutboundMessage => ({
    messageId: `msg_${run}_${n}`,
    webhookId: `msg_${run}_${n}`,
    eventId: `evt_${run}_${n}`,
    eventType: 'order.shipped',
    payload: { n, carrier: 'ups' },
    attemptNumber: 1,
  });
  const target = (config: Record<string, unknown> = {}) => ({
    endpointId: `ep_${run}`,
    kind: 'eventbridge' as const,
    url: null,
    config: {
      region,
      eventBusName: bus,
      source,
      endpoint: moto!.url,
      credentials: emulatorAwsCredentials(),
      ...config,
    },
    secrets: [],
  });

  const receive = (expected: number) => receiveFromQueue(sqs, queueUrl, expected, 10_000);

  beforeAll(async () => {
    moto = await ensureMoto();
    events = new EventBridgeClient({
      region,
      endpoint: moto.url,
      credentials: emulatorAwsCredentials(),
    });
    sqs = new SQSClient({ region, endpoint: moto.url, credentials: emulatorAwsCredentials() });
    await events.send(new CreateEventBusCommand({ Name: bus }));
    ({ QueueUrl: queueUrl } = (await sqs.send(
      new CreateQueueCommand({ QueueName: `hookbase-${run}-events` }),
    )) as { QueueUrl: string });
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    await events.send(
      new PutRuleCommand({
        Name: `hookbase-${run}`,
        EventBusName: bus,
        EventPattern: JSON.stringify({ source: [source] }),
      }),
    );
    await events.send(
      new PutTargetsCommand({
        Rule: `hookbase-${run}`,
        EventBusName: bus,
        Targets: [{ Id: 'queue', Arn: Attributes!.QueueArn }],
      }),
    );
    adapter = new EventBridgeDestinationAdapter({
      timeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      allowPrivateTargets: true,
    });
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await adapter?.close();
    events?.destroy();
    sqs?.destroy();
    await moto?.release();
  });

  it('puts one event: source from the config, detail type the event type, detail the payload', async () => {
    const report = await adapter.deliver(message(1), target());
    expect(report.outcome).toEqual({ kind: 'succeeded', status: 200 });
    expect(JSON.parse(report.responseExcerpt!)).toEqual({ EventId: expect.any(String) });

    const [received] = await receive(1);
    const event = JSON.parse(received.Body!);
    expect(event).toMatchObject({
      id: JSON.parse(report.responseExcerpt!).EventId,
      source,
      'detail-type': 'order.shipped',
      detail: { n: 1, carrier: 'ups' },
    });
  });

  it('fails for good when the bus does not exist', async () => {
    const report = await adapter.deliver(message(1), target({ eventBusName: `${bus}-missing` }));
    expect(report.outcome).toMatchObject({
      kind: 'failed',
      status: 400,
      error: expect.stringMatching(/^ResourceNotFoundException/),
    });
  });

  it('retries, quickly, when the service cannot be reached', async () => {
    const port = await unusedPort();
    const started = Date.now();
    const report = await adapter.deliver(
      message(1),
      target({ endpoint: `http://127.0.0.1:${port}` }),
    );
    expect(report.outcome).toMatchObject({
      kind: 'retry',
      error: expect.stringMatching(/^network: .*ECONNREFUSED/),
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('retries a service that does not answer in time as a timeout', async () => {
    const silent = createServer(() => {}); // accepts, reads, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const slow = new EventBridgeDestinationAdapter({
      timeoutMs: 300,
      connectTimeoutMs: 300,
      allowPrivateTargets: true,
    });
    const started = Date.now();
    const report = await slow.deliver(
      message(1),
      target({ endpoint: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }),
    );
    await slow.close();
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    expect(report.outcome).toEqual({ kind: 'retry', error: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  describe('a partial failure (FailedEntryCount > 0) is never a success', () => {
    let standIn: Server;
    let standInUrl: string;
    let entry: Record<string, string> = {};

    beforeAll(async () => {
      standIn = createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
          response.end(JSON.stringify({ FailedEntryCount: 1, Entries: [entry] }));
        });
      });
      await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
      standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => standIn.close(() => resolve())));

    it('retries an entry refused for throttling or an internal failure', async () => {
      for (const code of ['ThrottlingException', 'InternalFailure']) {
        entry = { ErrorCode: code, ErrorMessage: 'try later' };
        const report = await adapter.deliver(message(1), target({ endpoint: standInUrl }));
        expect(report.outcome).toEqual({ kind: 'retry', status: 200, error: `${code}: try later` });
      }
    });

    it('fails for good an entry refused as invalid or not authorized', async () => {
      for (const code of ['InvalidArgument', 'MalformedDetail', 'AccessDeniedException']) {
        entry = { ErrorCode: code, ErrorMessage: 'no' };
        const report = await adapter.deliver(message(1), target({ endpoint: standInUrl }));
        expect(report.outcome).toEqual({ kind: 'failed', status: 200, error: `${code}: no` });
      }
    });

    it('retries an entry refused without a code', async () => {
      entry = {};
      const report = await adapter.deliver(message(1), target({ endpoint: standInUrl }));
      expect(report.outcome).toMatchObject({ kind: 'retry', status: 200 });
    });
  });
});
