import { GrpcIngestClient } from '../../drivers/grpc-ingest-client';
import { TARGETS } from './figures';
import { runIngestSteps } from './steps';
import { freeLoopbackPort } from '../../core/ports';
import { ScenarioResult } from '../../core/result';
import { ScenarioContext } from '../../core/session';
import { Scenario } from '../../core/scenario';
import { UsageError } from '../../core/options';

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
  return {
    ctx: {
      ...ctx,
      options: { ...options, stackEnv: { ...options.stackEnv, HOOKBASE_GRPC_PORT: String(port) } },
    },
    address: `127.0.0.1:${port}`,
  };
}

/**
 * ingest-grpc: `hookbase.v1.Ingest` with a real @grpc/grpc-js client built from the repository's
 * .proto, the API key in the `authorization` metadata: `Publish` (one event per call) at --steps
 * calls in flight, then `PublishBatch` with --batch-sizes events per call at --batch-steps calls
 * in flight. Per step: accepted events/s and the call latency.
 */
export async function runIngestGrpc(context: ScenarioContext): Promise<ScenarioResult> {
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
}

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
  run: runIngestGrpc,
};
