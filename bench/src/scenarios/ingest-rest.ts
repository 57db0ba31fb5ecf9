import { singleEventRest } from '../ingest-clients';
import { TARGETS } from '../ingest-figures';
import { runIngestSteps } from '../ingest-steps';
import { IngestClient } from '../publisher';
import { ScenarioResult } from '../result';
import { ScenarioContext } from '../session';

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
