import { join } from 'node:path';

/**
 * The repository root. The CLI runs compiled from dist/bench/src (scripts/bench.mjs), and the
 * services it starts are the ones compiled into dist/apps by scripts/build.mjs.
 */
export const ROOT = join(__dirname, '..', '..', '..', '..');

export function serviceEntry(app: string): string {
  return join(ROOT, 'dist', 'apps', app, 'src', 'main.js');
}
