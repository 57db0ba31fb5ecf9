import { now, sleep } from '../core/util';
import { dueAt, PacingPlan, waitFor } from '../core/pacing';

export const EVENT_TYPE = 'bench.event';

export interface BenchEvent {
  eventType: string;
  payload: { s: number; pad?: string };
  endpointIds?: string[];
  channels?: string[];
  applicationId?: string;
}

/** A payload of about `bytes` bytes of JSON carrying the event's sequence number. */
export function benchPayload(seq: number, bytes: number): BenchEvent['payload'] {
  const base = JSON.stringify({ s: seq, pad: '' }).length;
  return bytes > base ? { s: seq, pad: 'x'.repeat(bytes - base) } : { s: seq };
}

/**
 * Open-loop load: event i is due at start + i / rate. When all `maxInFlight` slots are busy the
 * next event waits for one, and its scheduled time stays the planned one, so falling behind
 * shows as latency. Stops at `count` events or at the deadline, whichever comes first.
 */
export async function runOpenLoop(options: {
  ratePerSecond: number;
  count: number;
  maxInFlight: number;
  deadlineMs: number;
  send: (index: number, scheduledAt: number) => Promise<unknown>;
}): Promise<{ started: number; startMs: number; stoppedByDeadline: boolean }> {
  const plan: PacingPlan = {
    startMs: now(),
    ratePerSecond: options.ratePerSecond,
    count: options.count,
  };
  const inFlight = new Set<Promise<unknown>>();
  let started = 0;
  let stoppedByDeadline = false;
  for (let index = 0; index < plan.count; index++) {
    const wait = waitFor(plan, index, now());
    if (wait >= 1) await sleep(wait);
    while (inFlight.size >= options.maxInFlight) await Promise.race(inFlight);
    if (now() > options.deadlineMs) {
      stoppedByDeadline = true;
      break;
    }
    const sending: Promise<unknown> = options
      .send(index, dueAt(plan, index))
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
    started++;
  }
  await Promise.all(inFlight);
  return { started, startMs: plan.startMs, stoppedByDeadline };
}

/** Closed-loop load: `workers` loops, each sending its next event as soon as the last is answered. */
export async function runClosedLoop(options: {
  workers: number;
  untilMs: number;
  send: (worker: number) => Promise<unknown>;
}): Promise<void> {
  await Promise.all(
    Array.from({ length: options.workers }, async (_, worker) => {
      while (now() < options.untilMs) await options.send(worker);
    }),
  );
}

/**
 * Ordered load for FIFO endpoints: each lane (endpoint) has at most one publish in flight, so
 * the order the harness numbers its events is the order Hookbase accepted them for that lane.
 * `workers` lanes-at-a-time run in parallel.
 */
export async function runLanes(options: {
  lanes: readonly number[];
  perLane: number;
  workers: number;
  deadlineMs: number;
  send: (lane: number, index: number) => Promise<unknown>;
}): Promise<{ stoppedByDeadline: boolean }> {
  let stoppedByDeadline = false;
  const workers = Math.max(1, Math.min(options.workers, options.lanes.length));
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const mine = options.lanes.filter((_, i) => i % workers === worker);
      for (let index = 0; index < options.perLane; index++) {
        for (const lane of mine) {
          if (now() > options.deadlineMs) {
            stoppedByDeadline = true;
            return;
          }
          await options.send(lane, index);
        }
      }
    }),
  );
  return { stoppedByDeadline };
}

/**
 * Ordered load in batches: `workers` share the lanes, and each sends, round after round, one
 * call holding the next event of every lane it owns (`sendRound`), waiting for its answer before
 * the next round. A lane still has one event in flight at a time, so the order holds, while one
 * request carries many lanes' events: the publisher keeps ahead of the lanes it feeds.
 */
export async function runLaneRounds(options: {
  lanes: readonly number[];
  perLane: number;
  workers: number;
  deadlineMs: number;
  sendRound: (lanes: readonly number[], index: number) => Promise<unknown>;
}): Promise<{ stoppedByDeadline: boolean }> {
  let stoppedByDeadline = false;
  const workers = Math.max(1, Math.min(options.workers, options.lanes.length));
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const mine = options.lanes.filter((_, i) => i % workers === worker);
      for (let index = 0; index < options.perLane; index++) {
        if (now() > options.deadlineMs) {
          stoppedByDeadline = true;
          return;
        }
        await options.sendRound(mine, index);
      }
    }),
  );
  return { stoppedByDeadline };
}
