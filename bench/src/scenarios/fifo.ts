import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { now } from '../core/util';
import { askedBehaviour } from '../core/behaviour';
import { createOrganization } from '../core/hookbase-api';
import { Ledger } from '../core/ledger';
import { fmtInt, fmtMs, fmtRate } from '../core/report';
import { ScenarioResult } from '../core/result';
import { BenchSession, Scenario, ScenarioContext } from '../core/session';
import { distribution, ratePerSecond } from '../core/stats';
import { IngestClient, publishGroupInto, publishSeq } from '../drivers/ingest-clients';
import { benchPayload, EVENT_TYPE, runLaneRounds, runLanes } from '../drivers/publisher';
import { SHORT_RETRY } from './e2e';

/**
 * The probe client, run in a process of its own: Hookbase sends from another process than the
 * receiver's, so the round trip it can get includes a hand-over between processes; a probe from
 * inside the receiver's process would not pay that and would understate the RTT. It sends the
 * same request as a delivery (POST, about 256 bytes of JSON, keep-alive, undici as Hookbase
 * uses), one at a time, and prints each round trip as a JSON line until its stdin closes.
 */
const PROBE_CLIENT = `
const { Pool } = require(process.argv[1]);
const [url, latencyMs, everyMs] = [process.argv[2], process.argv[3], Number(process.argv[4])];
const pool = new Pool(url, { connections: 1 });
const body = JSON.stringify({ s: 0, pad: 'x'.repeat(240) });
let running = true;
process.stdin.on('end', () => (running = false));
process.stdin.resume();
(async () => {
  while (running) {
    const at = performance.timeOrigin + performance.now();
    const started = performance.now();
    const response = await pool.request({
      path: '/rtt',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bench-delay-ms': latencyMs },
      body,
    });
    await response.body.text();
    process.stdout.write(JSON.stringify({ at, ms: performance.now() - started }) + '\\n');
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  await pool.close();
})().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
`;

/**
 * The round trip to the receiver as a client in another process sees it, sampled all through
 * the run (every `everyMs`) until `stop` is called: the receiver shares this machine's cores with
 * the load, so its round trip while the lane runs is longer than when idle, and the bound is
 * taken under the same conditions.
 */
function probeRoundTripDuring(
  receiverUrl: string,
  latencyMs: number,
  everyMs: number,
): { stop(fromMs: number): Promise<{ fromMs: number | null; all: number | null }> } {
  const args = [require.resolve('undici'), receiverUrl, String(latencyMs), String(everyMs)];
  const child = spawn(process.execPath, ['-e', PROBE_CLIENT, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const samples: { at: number; ms: number }[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line) samples.push(JSON.parse(line) as { at: number; ms: number });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    /** The p50 round trip of the probes started at or after `fromMs` (all by default). */
    async stop(fromMs = 0) {
      child.stdin.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
      const p50 = (from: number) =>
        distribution(samples.filter((s) => s.at >= from).map((s) => s.ms))?.p50 ?? null;
      return { fromMs: p50(fromMs), all: p50(0) };
    },
  };
}

/** Deliveries after the publisher stopped needed to measure the lane alone. */
const MIN_DRAIN_DELIVERIES = 100;

/** Deliveries per second between the first and the last delivery at or after `fromMs`. */
function paceFrom(ledger: Ledger, fromMs = 0): { perSecond: number; deliveries: number } {
  const times = ledger
    .deliveries()
    .flatMap((d) => (d.deliveredAt >= fromMs ? [d.deliveredAt] : []));
  const [first, last] = [Math.min(...times), Math.max(...times)];
  const perSecond = times.length < 2 ? 0 : ratePerSecond(times.length - 1, first, last);
  return { perSecond, deliveries: times.length };
}

/**
 * fifo-rtt and fifo-many: setup (`lanes` FIFO endpoints of a pro organization) → load (`perLane`
 * events to each, in lane order, one publish in flight per lane) → drain → reconcile (the ledger,
 * and the order on every endpoint) → the run's report. With `batched` each worker publishes a
 * round of its lanes' next events in one `POST /v1/events/batch`, so the publisher is not what
 * limits many lanes (one event per request topped out near the REST ingest rate).
 */
async function runOrderedLanes(
  session: BenchSession,
  lanes: number,
  perLane: number,
  batched = false,
) {
  const { options, deadlineMs } = session.ctx;
  const tenant = await createOrganization(session.stack, 'pro');
  const ledger = new Ledger(options.scenario, { trackOrder: true });
  const lanesAt = Array.from({ length: lanes }, (_, index) => index);
  const request = { retry: SHORT_RETRY, fifoEnabled: true };
  const ids = await session.addEndpoints(tenant, lanesAt, ledger, askedBehaviour(options), request);
  const client = new IngestClient(
    session.stack.ingestUrl,
    tenant.apiKey,
    options.maxInFlight,
    batched,
  );
  let seq = 0;
  const loadDeadline = () => Math.min(deadlineMs, now() + 60_000);
  const sendRound = (round: readonly number[]) => {
    const seqs = round.map(() => seq++);
    const scheduledAt = now();
    seqs.forEach((s, i) => ledger.schedule(s, scheduledAt, new Set([round[i]])));
    const events = round.map((lane, i) => ({
      eventType: EVENT_TYPE,
      payload: benchPayload(seqs[i], options.payloadBytes),
      endpointIds: [ids[lane]],
    }));
    return publishGroupInto(ledger, client, seqs, events);
  };
  const measured = await session.deliveryRun({
    label: options.scenario,
    ledger,
    planned: lanes * perLane,
    offeredPerSecond: null,
    drainSeconds: options.drainTimeoutSeconds,
    trackOrder: true,
    load: () =>
      (batched
        ? runLaneRounds({
            lanes: lanesAt,
            perLane,
            workers: options.maxInFlight,
            deadlineMs: loadDeadline(),
            sendRound,
          })
        : runLanes({
            lanes: lanesAt,
            perLane,
            workers: options.maxInFlight,
            deadlineMs: loadDeadline(),
            send: (lane) =>
              publishSeq(ledger, client, seq++, now(), {
                targets: new Set([lane]),
                payloadBytes: options.payloadBytes,
                endpointIds: [ids[lane]],
              }),
          })
      ).finally(() => client.close()),
  });
  const order = measured.run.order!;
  if (order.violations > 0) {
    const examples = order.firstViolations.map(
      (v) => `endpoint ${v.lane}: ${v.got} after ${v.after}`,
    );
    measured.problems.push(`${order.violations} deliveries out of order (${examples.join('; ')})`);
  }
  // The pace after the publisher stopped: the lanes alone on the machine.
  return {
    ...measured,
    order,
    whole: paceFrom(ledger),
    alone: paceFrom(ledger, measured.loadEndMs),
  };
}

/**
 * fifo-rtt: one FIFO endpoint whose receiver takes 10 ms. With one message in flight, the lane
 * cannot beat 1/RTT; the scenario measures ordered deliveries/s against that bound (the ratio
 * shows Hookbase's own overhead per message) and verifies the order. The lane is measured alone:
 * once the publisher has stopped, the deliveries still queued run back to back, and the RTT is
 * probed over the same time (while it runs, ingest and fan-out share the cores with the lane).
 */
async function runFifoRtt(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options } = ctx;
  const session = await BenchSession.open(ctx);
  try {
    const probe = probeRoundTripDuring(session.receiverUrl, options.receiverLatencyMs, 25);
    const lane = await runOrderedLanes(session, 1, options.events);
    const rtt = await probe.stop(lane.loadEndMs);
    const alone = lane.alone.deliveries >= MIN_DRAIN_DELIVERIES;
    const rttMs = (alone ? rtt.fromMs : null) ?? rtt.all ?? Number.NaN;
    const measured = alone ? lane.alone.perSecond : lane.whole.perSecond;
    const bound = 1000 / rttMs;
    const ratio = measured / bound;
    const wholeRunRatio = lane.whole.perSecond / bound;
    const notes = ['the publisher sends faster than the bound, so deliveries run back to back'];
    if (!alone)
      notes.push(
        `only ${lane.alone.deliveries} deliveries after the publisher stopped (fewer than ${MIN_DRAIN_DELIVERIES}): the ratio is the whole run's; raise --events`,
      );
    return await session.result({
      summary: `${fmtRate(measured)} ordered deliveries/s, ${ratio.toFixed(2)} of the 1/RTT bound, ${fmtInt(lane.order.violations)} out of order`,
      title: `one FIFO endpoint, receiver latency ${options.receiverLatencyMs} ms, ${options.events} events`,
      headline: [
        [
          'ordered deliveries/s',
          `${fmtRate(measured)} (${alone ? `the lane alone: ${fmtInt(lane.alone.deliveries)} deliveries after the publisher stopped, ` : ''}first to last delivery)`,
        ],
        [
          'bound 1/RTT',
          `${fmtRate(bound)}/s (RTT ${fmtMs(rttMs)}: p50 of probes to the receiver from a client process of their own, over the same time; ${fmtMs(rtt.all)} over the whole run)`,
        ],
        ['measured / bound', ratio.toFixed(2)],
        [
          'whole run',
          `${fmtRate(lane.whole.perSecond)}/s first to last delivery, ${wholeRunRatio.toFixed(2)} of the bound (ingest and fan-out share the cores while the publisher runs)`,
        ],
      ],
      runs: [lane.run],
      problems: lane.problems,
      notes,
      extra: {
        rttMs,
        wholeRunRttMs: rtt.all,
        boundPerSecond: bound,
        orderedPerSecond: measured,
        ratio,
        wholeRunRatio,
      },
    });
  } finally {
    await session.close();
  }
}

/** fifo-many: many FIFO endpoints at once (500): aggregate ordered deliveries/s, order verified. */
async function runFifoMany(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options } = ctx;
  const session = await BenchSession.open(ctx);
  try {
    const lanes = await runOrderedLanes(
      session,
      options.endpoints,
      options.eventsPerEndpoint,
      true,
    );
    const { run, order } = lanes;
    return await session.result({
      summary: `${fmtRate(run.throughputPerSecond)} ordered deliveries/s over ${fmtInt(options.endpoints)} endpoints, ${fmtInt(order.violations)} out of order`,
      title: `${fmtInt(options.endpoints)} FIFO endpoints × ${options.eventsPerEndpoint} events, receiver latency ${options.receiverLatencyMs} ms`,
      headline: [
        [
          'ordered deliveries/s',
          `${fmtRate(run.throughputPerSecond)} aggregate (first event to last delivery); ${fmtRate(lanes.whole.perSecond)} between first and last delivery`,
        ],
        [
          'after the publisher stopped',
          `${fmtRate(lanes.alone.perSecond)}/s over the ${fmtInt(lanes.alone.deliveries)} deliveries still queued (the lanes alone on the machine)`,
        ],
      ],
      runs: [run],
      problems: lanes.problems,
      notes: [
        `each endpoint's events are published one at a time (acceptance order = sequence order): ${options.maxInFlight} publishers share the endpoints, each sending the next event of every endpoint it has in one POST /v1/events/batch per round`,
      ],
      extra: { orderedPerSecond: run.throughputPerSecond },
    });
  } finally {
    await session.close();
  }
}

const RECEIVER_FLAGS = ['receiver-latency', 'max-in-flight'] as const;

export const FIFO_RTT: Scenario = {
  name: 'fifo-rtt',
  summary: 'one FIFO endpoint, receiver latency 10 ms: ordered deliveries/s against 1/RTT',
  flags: ['events', ...RECEIVER_FLAGS],
  defaults: { endpoints: 1, events: 500, receiverLatencyMs: 10 },
  run: runFifoRtt,
};

export const FIFO_MANY: Scenario = {
  name: 'fifo-many',
  summary: '--endpoints FIFO endpoints: aggregate ordered deliveries/s, order verified',
  flags: ['endpoints', 'events-per-endpoint', ...RECEIVER_FLAGS],
  defaults: { endpoints: 500, eventsPerEndpoint: 10, receiverLatencyMs: 10, maxInFlight: 32 },
  run: runFifoMany,
};
