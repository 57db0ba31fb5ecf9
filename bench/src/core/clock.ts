import { performance } from 'node:perf_hooks';

/**
 * Milliseconds since the epoch with sub-millisecond resolution, from the monotonic clock: every
 * time the harness records (scheduled, sent, accepted, received) comes from here, so differences
 * between them never jump with a wall-clock adjustment.
 */
export function now(): number {
  return performance.timeOrigin + performance.now();
}
