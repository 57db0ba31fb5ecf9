import { BatchRestPublisher } from '../../drivers/ingest-clients';
import { TARGETS } from './figures';
import { runIngestSteps } from './steps';
import { ScenarioResult } from '../../core/result';
import { ScenarioContext } from '../../core/session';
import { Scenario } from '../../core/scenario';

/**
 * ingest-batch: `POST /v1/events/batch` with --batch-sizes events per request (100, 500; the
 * most HOOKBASE_MAX_BATCH_EVENTS allows is 500 by default), each at --batch-steps requests in
 * flight. Per step: accepted events/s (every event of a 207 counted on its own result) and the
 * request latency, which every event of the batch waited.
 */
export function runIngestBatch(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options } = ctx;
  return runIngestSteps(ctx, {
    name: `POST /v1/events/batch, ${options.batchSizes.join(' and ')} events per request`,
    target: TARGETS.batch,
    targetName: 'batch REST',
    steps: (tenant, session) => {
      const publisher = new BatchRestPublisher(
        session.stack.ingestUrl,
        tenant.apiKey,
        Math.max(...options.batchSteps),
      );
      return options.batchSizes.flatMap((size) =>
        options.batchSteps.map((concurrency) => ({
          label: `${size}/req ×${concurrency}`,
          call: 'POST /v1/events/batch',
          concurrency,
          eventsPerRequest: size,
          publisher,
        })),
      );
    },
    boundPublisher: (url, step) => new BatchRestPublisher(url, 'bare-http-bound', step.concurrency),
    notes: [
      '"500/req ×4" is 500 events per request, 4 requests in flight',
      'a batch request answers 207 with one result per event; each counts on its own',
    ],
  });
}

export const INGEST_BATCH: Scenario = {
  name: 'ingest-batch',
  summary: 'POST /v1/events/batch: --batch-sizes events per request at --batch-steps in flight',
  flags: ['batch-sizes', 'batch-steps', 'step-seconds', 'endpoints', 'records', 'batch'],
  defaults: { endpoints: 0, batchSizes: [100, 500], batchSteps: [1, 4, 16], records: 100_000 },
  run: runIngestBatch,
};
