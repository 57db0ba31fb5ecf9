// The browser the dashboard's tests drive: Debian's chromium package, installed with apt-get
// when missing (as PostgreSQL is), never a browser build downloaded by a test tool.
import { existsSync } from 'node:fs';
import { lastLines, run } from './wait.mjs';

export const CHROMIUM_PATH = process.env.HOOKBASE_CHROMIUM ?? '/usr/bin/chromium';

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** The chromium executable's path, installing Debian's package first when it is not there. */
export async function ensureChromium({ log = () => {} } = {}) {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  if (!isRoot()) {
    throw new Error(
      `chromium was not found at ${CHROMIUM_PATH}. Install Debian's package as root ` +
        '(`sudo apt-get install chromium`), or set HOOKBASE_CHROMIUM to a Chromium executable.',
    );
  }
  log("chromium is not installed: installing Debian's chromium package (apt-get)...");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
    const { code, output } = await run('apt-get', args, { env });
    if (code !== 0) {
      throw new Error(`apt-get ${args.join(' ')} failed (exit ${code}):\n${lastLines(output, 20)}`);
    }
  }
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is not there`);
  }
  log(`installed chromium (${CHROMIUM_PATH})`);
  return CHROMIUM_PATH;
}
