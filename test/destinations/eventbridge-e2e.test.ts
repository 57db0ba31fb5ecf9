import { randomBytes } from 'node:crypto';
import {
  CreateEventBusCommand,
  EventBridgeClient,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  emulatorAwsCredentials,
  EMULATOR_SETUP_TIMEOUT_MS,
  ensureMoto,
  pollUntil,
  TcpProxy,
  receiveExactly,
} from '@hookbase/testing';
import { CloudE2e, QUICK_RETRY, sentInPublishOrder, startCloudE2e } from './cloud-e2e';

/**
 * EventBridge endpoints end to end against moto: events put on a bus are read back through a
 * rule whose target is an SQS queue. A FIFO endpoint's order is checked on Hookbase's side (one
 * PutEvents at a time, in publish order) and in the queue's arrival order.
 */
describe('EventBridge endpoints (moto)', () => {
  const region = 'us-east-1';
  const run = randomBytes(4).toString('hex');
  const bus = `e2e-${run}`;
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let events: EventBridgeClient;
  let sqs: SQSClient;
  let e2e: CloudE2e;

  /** A rule on the bus sending events of `source` to a new queue; returns the queue URL. */
  async function queueFor(source: string): Promise<string> {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: `e2e-${run}-${source.replace(/\W/g, '-')}` }),
    );
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    const rule = `e2e-${run}-${source.replace(/\W/g, '-')}`;
    await events.send(
      new PutRuleCommand({
        Name: rule,
        EventBusName: bus,
        EventPattern: JSON.stringify({ source: [source] }),
      }),
    );
    await events.send(
      new PutTargetsCommand({
        Rule: rule,
        EventBusName: bus,
        Targets: [{ Id: 'queue', Arn: Attributes!.QueueArn }],
      }),
    );
    return QueueUrl!;
  }

  const receive = (queueUrl: string, count: number) => receiveExactly(sqs, queueUrl, count);

  const config = (source: string, options: { endpoint?: string; eventBusName?: string } = {}) => ({
    region,
    eventBusName: options.eventBusName ?? bus,
    source,
    endpoint: options.endpoint ?? moto!.url,
    credentials: emulatorAwsCredentials(),
  });

  beforeAll(async () => {
    moto = await ensureMoto();
    events = new EventBridgeClient({
      region,
      endpoint: moto.url,
      credentials: emulatorAwsCredentials(),
    });
    sqs = new SQSClient({ region, endpoint: moto.url, credentials: emulatorAwsCredentials() });
    await events.send(new CreateEventBusCommand({ Name: bus }));
    e2e = await startCloudE2e();
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await e2e?.stop();
    events?.destroy();
    sqs?.destroy();
    await moto?.release();
  });

  it('puts published events on the bus: source from the config, detail type the event type, detail the payload', async () => {
    const source = 'com.example.shop';
    const queueUrl = await queueFor(source);
    const endpointId = await e2e.endpoint({
      kind: 'eventbridge',
      config: config(source),
      eventTypes: ['order.shipped'],
    });
    const shown = (await e2e.client.get(`${e2e.org}/webhook-endpoints/${endpointId}`)).body.data;
    expect(shown.config).toEqual({ region, eventBusName: bus, source, endpoint: moto!.url });
    expect(shown.credentials).toEqual({ configured: true });

    const eventId = await e2e.publish('order.shipped', { carrier: 'ups', n: 1 });
    const [attempt] = await e2e.delivered(eventId, endpointId);
    const [received] = await receive(queueUrl, 1);
    const event = JSON.parse(received.Body!);
    expect(event).toMatchObject({
      source,
      'detail-type': 'order.shipped',
      detail: { carrier: 'ups', n: 1 },
    });
    expect(attempt).toMatchObject({ outcome: 'succeeded', responseStatus: 200 });
  });

  it('sends a FIFO endpoint one event at a time, in publish order', async () => {
    const source = 'com.example.fifo';
    const queueUrl = await queueFor(source);
    const endpointId = await e2e.endpoint({
      kind: 'eventbridge',
      config: config(source),
      eventTypes: ['order.fifo'],
      fifoEnabled: true,
    });
    const count = 10;
    const eventIds: string[] = [];
    for (let n = 1; n <= count; n++) eventIds.push(await e2e.publish('order.fifo', { n }));

    const perEvent = await Promise.all(eventIds.map((id) => e2e.delivered(id, endpointId)));
    expect(sentInPublishOrder(perEvent)).toBe(true);
    const received = await receive(queueUrl, count);
    expect(received.map((m) => JSON.parse(m.Body!).detail.n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: count }, (_, i) => i + 1),
    );
  });

  it('retries while the service is unreachable and delivers once it is back', async () => {
    const source = 'com.example.outage';
    const queueUrl = await queueFor(source);
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(moto!.url).port));
    const proxyPort = await proxy.start();
    try {
      const endpointId = await e2e.endpoint({
        kind: 'eventbridge',
        config: config(source, { endpoint: `http://127.0.0.1:${proxyPort}` }),
        eventTypes: ['order.outage'],
        retry: QUICK_RETRY,
      });
      await e2e.delivered(await e2e.publish('order.outage', { n: 1 }), endpointId);

      await proxy.cut();
      const eventId = await e2e.publish('order.outage', { n: 2 });
      const { id } = await e2e.messageOf(eventId, endpointId);
      await pollUntil(
        async () => (await e2e.attemptsOf(id)).filter((a) => a.outcome === 'retry').length >= 2,
        { description: 'two attempts retried during the outage' },
      );
      await proxy.restore();

      const attempts = await e2e.delivered(eventId, endpointId);
      expect(attempts.slice(0, -1).every((a) => a.outcome === 'retry')).toBe(true);
      expect(attempts[0].error).toMatch(/^network: /);
      const received = await receive(queueUrl, 2);
      expect(received.map((m) => JSON.parse(m.Body!).detail.n).sort()).toEqual([1, 2]);
    } finally {
      await proxy.stop();
    }
  });

  it('dead-letters a message for a bus that does not exist as permanent_failure', async () => {
    const endpointId = await e2e.endpoint({
      kind: 'eventbridge',
      config: config('com.example.lost', { eventBusName: `${bus}-missing` }),
      eventTypes: ['order.lost'],
      retry: QUICK_RETRY,
    });
    const eventId = await e2e.publish('order.lost', { n: 1 });
    const { id } = await e2e.messageOf(eventId, endpointId);
    const [entry] = await pollUntil(
      async () => {
        const entries = await e2e.dlqEntries(endpointId);
        return entries.length > 0 ? entries : false;
      },
      { description: 'the DLQ entry' },
    );
    expect(entry).toMatchObject({ messageId: id, reason: 'permanent_failure' });
    expect(entry.lastError).toMatch(/ResourceNotFound/);
    expect(await e2e.attemptsOf(id)).toHaveLength(1);
  });
});
