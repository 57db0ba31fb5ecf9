import { EndpointBehaviour } from '../behaviour';
import { now } from '../clock';
import { createEndpoints, createOrganization } from '../hookbase-api';
import { Ledger } from '../ledger';
import { planEvents } from '../pacing';
import { benchPayload, EVENT_TYPE, IngestClient, publishInto, runOpenLoop } from '../publisher';
import { fmtInt, fmtMs, fmtRate } from '../report';
import { ScenarioResult } from '../result';
import { BenchSession, ScenarioContext } from '../session';

/** Retries shortened through the API so a failed first attempt is retried within the run. */
export const SHORT_RETRY = { delaysMs: [0, 200, 1000], maxAgeMs: 60_000 };

/**
 * e2e: one organization with N http endpoints (1000), each subscribed to every type, unordered,
 * and a fast receiver. Each event is fanned out by Hookbase to all endpoints (no endpointIds):
 * one publish makes N deliveries, so ingest stays off the critical path and the figure is the
 * fan-out + dispatch pipeline's (ingest alone is ingest-rest's). With --fail-rate the receiver
 * fails that share of first attempts; their retries succeed.
 */
export async function runE2e(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options, progress } = ctx;
  const session = await BenchSession.open(ctx);
  try {
    const tenant = await createOrganization(session.stack, 'free');
    const ledger = new Ledger('e2e');
    const behaviour: EndpointBehaviour = {
      latencyMs: options.receiverLatencyMs,
      failRate: options.failRate,
      failWith: options.failWith,
      failAttempts: 'first',
    };
    const count = options.endpoints;
    session.setPhase('setup', () => `creating ${fmtInt(count)} endpoints`);
    let created = 0;
    session.setPhase(
      'setup',
      () => `endpoints ${fmtInt(created)}/${fmtInt(count)}`,
      () => created / count,
    );
    const ids = await createEndpoints(
      tenant,
      Array.from({ length: count }, (_, i) => ({
        url: `${session.receiverUrl}/e/${i}`,
        retry: SHORT_RETRY,
      })),
      16,
      (done) => (created = done),
    );
    ids.forEach((id, index) => session.addEndpoint(id, index, ledger, behaviour));
    const everyone = new Set(ids.map((_, index) => index));
    progress.note(
      `e2e: ${fmtInt(count)} endpoints created; ${options.rate} events/s for ${options.durationSeconds} s, each to all`,
    );

    const client = new IngestClient(session.stack.ingestUrl, tenant.apiKey, options.maxInFlight);
    const planned = planEvents(options.rate, options.durationSeconds);
    session.watch('load', [ledger], planned);
    const startMs = now();
    const load = await runOpenLoop({
      ratePerSecond: options.rate,
      count: planned,
      maxInFlight: options.maxInFlight,
      deadlineMs: Math.min(ctx.deadlineMs, startMs + options.durationSeconds * 1000 + 30_000),
      send: async (seq, scheduledAt) => {
        ledger.schedule(seq, scheduledAt, everyone);
        await publishInto(ledger, client, seq, {
          eventType: EVENT_TYPE,
          payload: benchPayload(seq, options.payloadBytes),
        });
      },
    });
    const loadEndMs = now();
    await client.close();
    session.watch('draining', [ledger], null);
    const settled = await session.drain([ledger], loadEndMs + options.drainTimeoutSeconds * 1000);
    const run = await session.report(
      { label: 'e2e', startMs, loadEndMs, offeredPerSecond: options.rate * count },
      ledger,
    );
    const problems = [...run.ledger.problems];
    if (!settled)
      problems.push(
        `deliveries did not settle within ${options.drainTimeoutSeconds} s after the load`,
      );
    if (load.stoppedByDeadline)
      problems.push(`the load stopped at its deadline after ${load.started} of ${planned} events`);
    const m = run.ledger.messages;
    const failing =
      options.failRate > 0
        ? `, receiver fails ${options.failRate * 100}% of first attempts with ${options.failWith}`
        : '';
    return await session.result({
      summary: `${fmtRate(run.throughputPerSecond)} deliveries/s, p50 ${fmtMs(run.latency?.p50)}, p99 ${fmtMs(run.latency?.p99)}, missing ${fmtInt(m.missing)}, duplicates ${fmtInt(m.duplicates)}`,
      title: `${fmtInt(count)} endpoints, fan-out to all, ${options.rate} events/s for ${options.durationSeconds} s${failing}`,
      headline: [
        [
          'deliveries/s',
          `${fmtRate(run.throughputPerSecond)} (peak ${fmtRate(run.peakDeliveredPerSecond)} in a ${run.timeline.length > 1 ? run.timeline[1].t - run.timeline[0].t : 1} s bucket); offered ${fmtRate(options.rate * count)}`,
        ],
        [
          'latency (received − scheduled)',
          `p50 ${fmtMs(run.latency?.p50)} · p95 ${fmtMs(run.latency?.p95)} · p99 ${fmtMs(run.latency?.p99)} · max ${fmtMs(run.latency?.max)}`,
        ],
        [
          'messages',
          `published ${fmtInt(m.published)} = delivered ${fmtInt(m.delivered)} + dead-lettered ${fmtInt(m.deadLettered)} + missing ${fmtInt(m.missing)} (${run.ledger.balanced ? 'balanced' : 'NOT balanced'})`,
        ],
        ['duplicates', fmtInt(m.duplicates)],
        ['dead letters by reason', JSON.stringify(session.reasonsFor())],
        [
          'attempts',
          `${fmtInt(m.attempts)} (${fmtInt(m.failedAttempts)} failed on purpose or dropped)`,
        ],
        [
          'publish',
          `send delay p99 ${fmtMs(run.sendDelay?.p99)} · accept p50 ${fmtMs(run.acceptLatency?.p50)} p99 ${fmtMs(run.acceptLatency?.p99)}`,
        ],
        [
          'peak consumer lag',
          `dispatcher ${fmtInt(run.lag.peak?.dispatcher)} · fan-out ${fmtInt(run.lag.peak?.fanout)} (end: ${fmtInt(run.lag.final?.dispatcher)})`,
        ],
      ],
      runs: [{ run, offsetSeconds: session.offset(startMs) }],
      problems,
      notes: [
        'each event is fanned out to every endpoint (no endpointIds): deliveries/s measures fan-out + dispatch, not ingest',
      ],
    });
  } finally {
    await session.close();
  }
}
