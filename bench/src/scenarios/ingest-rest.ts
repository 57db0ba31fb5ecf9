import { HEALTHY } from '../behaviour';
import { PlacedRun } from '../chart-spec';
import { now } from '../clock';
import { createEndpoints, createOrganization } from '../hookbase-api';
import { Ledger, LedgerSink } from '../ledger';
import { benchPayload, EVENT_TYPE, IngestClient, publishInto, runClosedLoop } from '../publisher';
import { fmtInt, fmtMs, fmtRate } from '../report';
import { RunReport, ScenarioResult } from '../result';
import { BenchSession, ScenarioContext } from '../session';

/**
 * ingest-rest: single-event `POST /v1/events` at rising concurrency (closed loop: each of C
 * workers sends its next event as soon as the last is answered), a few seconds per step. Per
 * step: accepted events/s and the accept latency (answered − scheduled; in a closed loop an event
 * is scheduled when its worker is free, so saturation shows as flat events/s and rising latency).
 *
 * By default the organization has no endpoints, so the figure is ingest's alone (the fan-out
 * still reads and records every event); the ledger then checks every publish was answered.
 * `--endpoints N` adds N subscribed endpoints and waits for every delivery after the steps.
 */
export async function runIngestRest(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options, progress } = ctx;
  const session = await BenchSession.open(ctx);
  try {
    const tenant = await createOrganization(session.stack, 'free');
    const ledgers = options.steps.map((concurrency) => new Ledger(`${concurrency} in flight`));
    const ids = await createEndpoints(
      tenant,
      Array.from({ length: options.endpoints }, (_, i) => ({
        url: `${session.receiverUrl}/e/${i}`,
      })),
      8,
    );
    // Deliveries of every step go to the same endpoints; each message is counted in its step's
    // ledger, found by the event's sequence number (attempts) or id (dead letters).
    const router: LedgerSink = {
      attempt: (seq, endpoint, at, ok) =>
        ledgers[Math.floor(seq / STEP_SEQ)]?.attempt(seq, endpoint, at, ok),
      deadLettered: (eventId, endpoint) =>
        (ledgers.find((ledger) => ledger.knowsEvent(eventId)) ?? ledgers[0]).deadLettered(
          eventId,
          endpoint,
        ),
    };
    ids.forEach((id, index) => session.addEndpoint(id, index, router, HEALTHY));
    const targets = new Set(ids.map((_, index) => index));

    const client = new IngestClient(
      session.stack.ingestUrl,
      tenant.apiKey,
      Math.max(...options.steps),
    );
    // Warm-up: connections, the API key cache and the JIT, so step 1 does not measure start-up.
    for (let i = 0; i < 20; i++)
      await client.publish({ eventType: 'bench.warmup', payload: { s: -1 } });

    const placed: PlacedRun[] = [];
    const runs: RunReport[] = [];
    for (const [step, concurrency] of options.steps.entries()) {
      const ledger = ledgers[step];
      let seq = step * STEP_SEQ;
      const startMs = now();
      const untilMs = Math.min(startMs + options.stepSeconds * 1000, ctx.deadlineMs);
      session.watch(
        `step ${step + 1}/${options.steps.length}: ${concurrency} in flight`,
        [ledger],
        null,
      );
      session.setPhase(
        `step ${step + 1}/${options.steps.length}: ${concurrency} in flight`,
        () =>
          `accepted ${fmtInt(ledger.progress.accepted)} · refused ${fmtInt(ledger.progress.refused + ledger.progress.failed)}`,
        () => (now() - startMs) / (untilMs - startMs),
      );
      await runClosedLoop({
        workers: concurrency,
        untilMs,
        send: async () => {
          const mine = seq++;
          ledger.schedule(mine, now(), targets, step);
          await publishInto(ledger, client, mine, {
            eventType: EVENT_TYPE,
            payload: benchPayload(mine, options.payloadBytes),
          });
        },
      });
      const loadEndMs = now();
      const run = await session.report(
        { label: `${concurrency} in flight`, startMs, loadEndMs, offeredPerSecond: null },
        ledger,
      );
      runs.push(run);
      placed.push({ run, offsetSeconds: session.offset(startMs) });
      progress.note(
        `  ${String(concurrency).padStart(4)} in flight: ${fmtRate(run.acceptedPerSecond)} accepted/s, p50 ${fmtMs(run.acceptLatency?.p50)}, p99 ${fmtMs(run.acceptLatency?.p99)}`,
      );
    }
    await client.close();

    const problems: string[] = [];
    if (options.endpoints > 0) {
      const drainFrom = now();
      session.watch('draining', ledgers, null);
      const settled = await session.drain(ledgers, drainFrom + options.drainTimeoutSeconds * 1000);
      if (!settled)
        problems.push(
          `deliveries did not settle within ${options.drainTimeoutSeconds} s after the steps`,
        );
      // Re-read the ledgers now that deliveries are in.
      for (const [index, ledger] of ledgers.entries()) runs[index].ledger = ledger.reconcile();
    }
    for (const run of runs) problems.push(...run.ledger.problems.map((p) => `${run.label}: ${p}`));

    const best = runs.reduce((a, b) => (b.acceptedPerSecond > a.acceptedPerSecond ? b : a));
    const refused = runs.reduce(
      (total, run) => total + run.ledger.events.refused + run.ledger.events.failed,
      0,
    );
    return await session.result({
      summary: runs
        .map((run) => `${run.label.replace(' in flight', '')}: ${fmtRate(run.acceptedPerSecond)}/s`)
        .join(' · ')
        .concat(' accepted (by in-flight requests)'),
      title: `POST /v1/events at ${options.steps.join(', ')} in flight, ${options.stepSeconds} s each`,
      headline: [
        ['best', `${fmtRate(best.acceptedPerSecond)} accepted events/s at ${best.label}`],
        ['accepted', fmtInt(runs.reduce((t, r) => t + r.ledger.events.accepted, 0))],
        [
          'refused or failed',
          `${fmtInt(refused)}${refused > 0 ? ` (${JSON.stringify(Object.assign({}, ...runs.map((r) => r.ledger.refusals)))})` : ''}`,
        ],
        [
          'endpoints',
          options.endpoints > 0
            ? `${options.endpoints} (every delivery checked)`
            : 'none (ingest only)',
        ],
      ],
      tables: [
        {
          title: 'Steps (latency = accepted − scheduled)',
          header: ['in flight', 'requests', 'accepted/s', 'refused', 'p50', 'p95', 'p99', 'max'],
          rows: runs.map((run) => [
            run.label.replace(' in flight', ''),
            fmtInt(run.ledger.events.sent),
            fmtRate(run.acceptedPerSecond),
            fmtInt(run.ledger.events.refused + run.ledger.events.failed),
            fmtMs(run.acceptLatency?.p50),
            fmtMs(run.acceptLatency?.p95),
            fmtMs(run.acceptLatency?.p99),
            fmtMs(run.acceptLatency?.max),
          ]),
        },
      ],
      runs: placed,
      problems,
      notes: [
        'closed loop: each worker schedules its next event when the previous one is answered',
        ...(options.endpoints === 0
          ? [
              'no endpoints: the ledger checks every publish was answered (there are no messages to deliver)',
            ]
          : []),
      ],
      chart: { combineRuns: true, latency: 'accept' },
    });
  } finally {
    await session.close();
  }
}

/** Sequence numbers of step k start at k × STEP_SEQ, so a delivery tells its step. */
const STEP_SEQ = 10_000_000;
