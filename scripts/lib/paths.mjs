// Where this checkout keeps what it makes: `.cache` (downloads and builds, shared by every run) and
// the data directory (servers' data, pids, logs, locks, test results): `.data`, or
// HOOKBASE_DATA_DIR, which lets one run keep infrastructure of its own beside another's (the
// stability check gives each of its runs a fresh one).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The data directory: HOOKBASE_DATA_DIR when set (relative to the checkout), else `.data`. */
export function dataDir() {
  const configured = process.env.HOOKBASE_DATA_DIR;
  return configured ? resolve(root, configured) : join(root, '.data');
}
