import { UsageError } from '../../core/options';
import { freeLoopbackPort } from '../../core/ports';
import { Scenario } from '../../core/scenario';
import { ScenarioContext } from '../../core/session';
import { GrpcIngestClient } from '../../drivers/grpc-ingest-client';
import { IngestClient } from '../../drivers/ingest-clients';
import { TARGETS } from './figures';
import { runIngestSteps } from './steps';

/**
 * The ingest surfaces driven by the step runner (steps.ts), each a declaration of its steps:
 * ingest-rest, ingest-batch and ingest-grpc. Per step: accepted events/s and the request latency;
 * saturation shows as flat events/s and rising latency.
 */

/** ingest-rest: single-event `POST /v1/events` at --steps requests in flight. */
export const INGEST_REST: Scenario = {
  name: 'ingest-rest',
  summary: 'POST /v1/events, one event per request, at rising concurrency (--steps)',
  flags: ['steps', 'step-seconds', 'endpoints', 'records', 'batch', 'validated-schema'],
  defaults: { endpoints: 0, steps: [1, 8, 32, 128], stepSeconds: 4, records: 100_000 },
  run: (ctx) =>
    runIngestSteps(ctx, {
      name: 'POST /v1/events, one event per request',
      target: TARGETS.single,
      targetName: 'single-event REST',
      steps: (tenant, session) => {
        const { steps } = ctx.options;
        const client = new IngestClient(session.stack.ingestUrl, tenant.apiKey, Math.max(...steps));
        return steps.map((concurrency) => ({
          label: `${concurrency} in flight`,
          call: 'POST /v1/events',
          concurrency,
          eventsPerRequest: 1,
          publisher: client,
        }));
      },
    }),
};

/**
 * ingest-batch: `POST /v1/events/batch` with --batch-sizes events per request (500 is the most
 * HOOKBASE_MAX_BATCH_EVENTS allows by default), each at --batch-steps requests in flight; every
 * event of a 207 counts on its own result, and every event of a batch waited the request's time.
 */
export const INGEST_BATCH: Scenario = {
  name: 'ingest-batch',
  summary: 'POST /v1/events/batch: --batch-sizes events per request at --batch-steps in flight',
  flags: ['batch-sizes', 'batch-steps', 'step-seconds', 'endpoints', 'records', 'batch'],
  defaults: { endpoints: 0, batchSizes: [100, 500], batchSteps: [1, 4, 16], records: 100_000 },
  run: (ctx) => {
    const { batchSizes, batchSteps } = ctx.options;
    return runIngestSteps(ctx, {
      name: `POST /v1/events/batch, ${batchSizes.join(' and ')} events per request`,
      target: TARGETS.batch,
      targetName: 'batch REST',
      steps: (tenant, session) => {
        const { ingestUrl } = session.stack;
        const publisher = new IngestClient(ingestUrl, tenant.apiKey, Math.max(...batchSteps), true);
        return batchSizes.flatMap((size) =>
          batchSteps.map((concurrency) => ({
            label: `${size}/req ×${concurrency}`,
            call: 'POST /v1/events/batch',
            concurrency,
            eventsPerRequest: size,
            publisher,
          })),
        );
      },
      notes: [
        '"500/req ×4" is 500 events per request, 4 requests in flight',
        'a batch request answers 207 with one result per event; each counts on its own',
      ],
    });
  },
};

/** The gRPC ingest a running Hookbase listens on unless --grpc-address says otherwise. */
const DEFAULT_GRPC_PORT = 50051;

/**
 * Where the gRPC ingest will listen. A stack the bench starts gets a free port of its own (a
 * running `npm start` may hold 50051), unless --stack-env HOOKBASE_GRPC_PORT names one.
 */
async function grpcEndpoint(
  ctx: ScenarioContext,
): Promise<{ ctx: ScenarioContext; address: string }> {
  const { options } = ctx;
  if (options.attach) {
    const host = new URL(options.attach.url).hostname;
    return { ctx, address: options.grpcAddress ?? `${host}:${DEFAULT_GRPC_PORT}` };
  }
  const asked = Number(options.stackEnv.HOOKBASE_GRPC_PORT ?? 0);
  if (asked < 0)
    throw new Error('ingest-grpc needs gRPC ingest: HOOKBASE_GRPC_PORT=-1 turns it off');
  const port = asked > 0 ? asked : await freeLoopbackPort();
  const stackEnv = { ...options.stackEnv, HOOKBASE_GRPC_PORT: String(port) };
  return { ctx: { ...ctx, options: { ...options, stackEnv } }, address: `127.0.0.1:${port}` };
}

/**
 * ingest-grpc: `hookbase.v1.Ingest` with a real @grpc/grpc-js client built from the repository's
 * .proto, the API key in the `authorization` metadata: `Publish` (one event per call) at --steps
 * calls in flight, then `PublishBatch` with --batch-sizes events per call at --batch-steps.
 */
export const INGEST_GRPC: Scenario = {
  name: 'ingest-grpc',
  summary: 'gRPC hookbase.v1.Ingest: Publish at --steps, PublishBatch as ingest-batch',
  flags: [
    'steps',
    'batch-sizes',
    'batch-steps',
    'step-seconds',
    'endpoints',
    'records',
    'batch',
    'grpc-address',
  ],
  defaults: {
    endpoints: 0,
    steps: [1, 8, 32, 128],
    batchSizes: [100, 500],
    batchSteps: [1, 4, 16],
    records: 100_000,
  },
  refine(given, attached) {
    if (given.grpcAddress !== undefined && !attached)
      throw new UsageError('--grpc-address goes with --url (a running Hookbase)');
    return {};
  },
  run: async (context) => {
    const { ctx, address } = await grpcEndpoint(context);
    const { options } = ctx;
    return runIngestSteps(ctx, {
      name: `gRPC hookbase.v1.Ingest at ${address}: Publish, PublishBatch of ${options.batchSizes.join(' and ')}`,
      target: TARGETS.batch,
      targetName: 'gRPC, as batch',
      steps: (tenant) => {
        const client = new GrpcIngestClient(address, tenant.apiKey);
        return [
          ...options.steps.map((concurrency) => ({
            label: `Publish ×${concurrency}`,
            call: 'Publish',
            concurrency,
            eventsPerRequest: 1,
            publisher: client.publishEach,
          })),
          ...options.batchSizes.flatMap((size) =>
            options.batchSteps.map((concurrency) => ({
              label: `Batch ${size} ×${concurrency}`,
              call: 'PublishBatch',
              concurrency,
              eventsPerRequest: size,
              publisher: client.publishBatch,
            })),
          ),
        ];
      },
      notes: [
        '"Publish ×8" is 8 calls in flight; "Batch 500 ×4" is PublishBatch of 500 events, 4 calls in flight',
        'one gRPC channel (one HTTP/2 connection) carries every call in flight',
        'the target line is the batch/gRPC one (50,000 events/s); Publish steps are in the table',
      ],
    });
  },
};
