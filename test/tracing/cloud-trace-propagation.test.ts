import { randomBytes } from 'node:crypto';
import { CreateEventBusCommand, EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { PubSub } from '@google-cloud/pubsub';
import {
  EMULATOR_SETUP_TIMEOUT_MS,
  emulatorAwsCredentials,
  emulatorGoogleCredentials,
  ensureMoto,
  ensurePubsub,
  OtlpReceiver,
  pollUntil,
  ReceivedSpan,
} from '@hookbase/testing';
import { CloudE2e, startCloudE2e } from '../destinations/cloud-e2e';

/**
 * Every cloud destination kind's attempts join the publisher's trace as the HTTP ones do: one
 * event published with a `traceparent` to an SNS topic, an EventBridge bus and an S3 bucket in
 * moto and a Pub/Sub topic in Google's fake (pstest); each endpoint's attempt span is a child of
 * the event's fan-out span, with its endpoint id, kind, attempt number and outcome.
 */
describe('OpenTelemetry traces through cloud destinations', () => {
  const region = 'us-east-1';
  const projectId = 'hookbase-trace';
  const run = randomBytes(4).toString('hex');
  const collector = new OtlpReceiver();
  let moto: Awaited<ReturnType<typeof ensureMoto>> | undefined;
  let pubsubFake: Awaited<ReturnType<typeof ensurePubsub>> | undefined;
  let pubsub: PubSub | undefined;
  let e2e: CloudE2e;

  beforeAll(async () => {
    const collectorUrl = await collector.start();
    moto = await ensureMoto();
    pubsubFake = await ensurePubsub();
    pubsub = new PubSub({
      projectId,
      apiEndpoint: pubsubFake.host,
      emulatorMode: true,
      universeDomain: 'googleapis.com',
    });
    e2e = await startCloudE2e({
      OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  }, EMULATOR_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await e2e?.stop();
    await pubsub?.close();
    await pubsubFake?.release();
    await moto?.release();
    await collector.stop();
  });

  it('shows an attempt span for SNS, EventBridge, S3 and Pub/Sub under the fan-out of the caller trace', async () => {
    const aws = { region, endpoint: moto!.url, credentials: emulatorAwsCredentials() };
    const sns = new SNSClient(aws);
    const eventBridge = new EventBridgeClient(aws);
    const s3 = new S3Client({ ...aws, forcePathStyle: true });
    const bus = `trace-${run}`;
    const bucket = `trace-${run}`;
    const pubsubTopic = `trace-${run}`;
    let topicArn: string;
    try {
      topicArn = (await sns.send(new CreateTopicCommand({ Name: `trace-${run}` }))).TopicArn!;
      await eventBridge.send(new CreateEventBusCommand({ Name: bus }));
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    } finally {
      sns.destroy();
      eventBridge.destroy();
      s3.destroy();
    }
    await pubsub!.createTopic(pubsubTopic);

    const awsConfig = { region, endpoint: moto!.url, credentials: emulatorAwsCredentials() };
    const endpoints: Record<string, string> = {
      sns: await e2e.endpoint({ kind: 'sns', config: { ...awsConfig, topicArn } }),
      eventbridge: await e2e.endpoint({
        kind: 'eventbridge',
        config: { ...awsConfig, eventBusName: bus, source: `hookbase.trace.${run}` },
      }),
      s3: await e2e.endpoint({ kind: 's3', config: { ...awsConfig, bucket, prefix: 'traced/' } }),
      pubsub: await e2e.endpoint({
        kind: 'pubsub',
        config: {
          projectId,
          topic: pubsubTopic,
          endpoint: `http://${pubsubFake!.host}`,
          credentials: emulatorGoogleCredentials(),
        },
      }),
    };

    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const published = await e2e.client.request(
      'POST',
      '/v1/events',
      { eventType: 'cloud.traced', payload: { n: 1 } },
      { headers: { traceparent: `00-${traceId}-${callerSpanId}-01` } },
    );
    expect(published.status).toBe(202);
    const eventId: string = published.body.data.id;

    // Each message delivered, as the message log says.
    for (const endpointId of Object.values(endpoints)) {
      expect(await e2e.delivered(eventId, endpointId)).toHaveLength(1);
    }
    const spans = (name: string): ReceivedSpan[] =>
      collector.spans.filter((span) => span.traceId === traceId && span.name === name);
    const attemptOf = (endpointId: string) =>
      spans('attempt').filter((span) => span.attributes['hookbase.endpoint.id'] === endpointId);
    await pollUntil(
      () => Object.values(endpoints).every((endpointId) => attemptOf(endpointId).length === 1),
      { timeoutMs: 30_000, description: 'an attempt span of each cloud endpoint at the collector' },
    );
    expect(collector.refused).toEqual([]);

    const [publish] = spans('publish');
    expect(publish.parentSpanId).toBe(callerSpanId);
    const [fanout, ...moreFanouts] = spans('fan-out');
    expect(moreFanouts).toEqual([]);
    expect(fanout).toMatchObject({
      parentSpanId: publish.spanId,
      attributes: expect.objectContaining({
        'hookbase.event.id': eventId,
        'hookbase.fanout.deliveries': 4,
      }),
    });
    for (const [kind, endpointId] of Object.entries(endpoints)) {
      expect({ kind, spans: attemptOf(endpointId) }).toEqual({
        kind,
        spans: [
          expect.objectContaining({
            service: 'hookbase-standalone',
            parentSpanId: fanout.spanId,
            statusCode: 0,
            attributes: expect.objectContaining({
              'hookbase.endpoint.id': endpointId,
              'hookbase.endpoint.kind': kind,
              'hookbase.event.id': eventId,
              'hookbase.attempt.number': 1,
              'hookbase.attempt.outcome': 'succeeded',
              'hookbase.message.status': 'succeeded',
            }),
          }),
        ],
      });
    }
  });
});
