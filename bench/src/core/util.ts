import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * Milliseconds since the epoch with sub-millisecond resolution, from the monotonic clock: every
 * time the harness records comes from here, so differences never jump with a clock adjustment.
 */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The repository root: the CLI runs compiled from dist/bench/src (scripts/bench.mjs). */
export const ROOT = join(__dirname, '..', '..', '..', '..');

/** A service compiled into dist/apps by scripts/build.mjs. */
export const serviceEntry = (app: string) => join(ROOT, 'dist', 'apps', app, 'src', 'main.js');

/** A TCP port free on 127.0.0.1 right now (the kernel's pick). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Runs `work` on every item, at most `concurrency` at once. */
export async function eachLimited<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index], index);
      }
    }),
  );
}

export const EXIT = { ok: 0, void: 1, usage: 64 } as const;
