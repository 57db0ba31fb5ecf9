import { singleEventRest } from '../../drivers/ingest-clients';
import { TARGETS } from './figures';
import { runIngestSteps } from './steps';
import { IngestClient } from '../../drivers/publisher';
import { ScenarioResult } from '../../core/result';
import { ScenarioContext } from '../../core/session';
import { Scenario } from '../../core/scenario';

/**
 * ingest-rest: single-event `POST /v1/events` at rising concurrency (--steps), a few seconds per
 * step, each worker sending its next event as soon as the last is answered. Per step: accepted
 * events/s and the request latency; saturation shows as flat events/s and rising latency.
 */
export function runIngestRest(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options } = ctx;
  return runIngestSteps(ctx, {
    name: 'POST /v1/events, one event per request',
    target: TARGETS.single,
    targetName: 'single-event REST',
    steps: (tenant, session) => {
      const publisher = singleEventRest(
        new IngestClient(session.stack.ingestUrl, tenant.apiKey, Math.max(...options.steps)),
      );
      return options.steps.map((concurrency) => ({
        label: `${concurrency} in flight`,
        call: 'POST /v1/events',
        concurrency,
        eventsPerRequest: 1,
        publisher,
      }));
    },
    boundPublisher: (url, step) =>
      singleEventRest(new IngestClient(url, 'bare-http-bound', step.concurrency)),
  });
}

export const INGEST_REST: Scenario = {
  name: 'ingest-rest',
  summary: 'POST /v1/events, one event per request, at rising concurrency (--steps)',
  flags: ['steps', 'step-seconds', 'endpoints', 'records', 'batch'],
  defaults: { endpoints: 0, steps: [1, 8, 32, 128], stepSeconds: 4, records: 100_000 },
  run: runIngestRest,
};
