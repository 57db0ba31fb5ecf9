import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../core/paths';

/** moto answers with any credentials; the SDKs insist on some. A fresh object each time. */
export function motoCredentials(): { accessKeyId: string; secretAccessKey: string } {
  return { accessKeyId: 'AKIAHOOKBASEBENCHKEY', secretAccessKey: 'hookbase-bench-secret' };
}

export const MOTO_REGION = 'us-east-1';

export interface MotoLease {
  url: string;
  /** Whether this bench started moto (it then stops when the last lease is given back). */
  startedByUs: boolean;
  release(): Promise<void>;
}

function runLease(command: 'acquire' | 'release', timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(ROOT, 'scripts', 'lib', 'moto.mjs'), command, String(process.pid)],
      { cwd: ROOT, timeout: Math.round(timeoutMs), maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error)
          reject(
            new Error(
              `node scripts/lib/moto.mjs ${command} failed (${error.message.split('\n')[0]}):\n${stderr.trim()}`,
            ),
          );
        else resolve(stdout.trim().split('\n').at(-1) ?? '');
      },
    );
  });
}

/**
 * moto's server for this bench, through scripts/lib/moto.mjs's leases (as the test files take
 * it): reused when it already answers on MOTO_PORT, started otherwise (installed into .cache on
 * first use). `release()` gives the lease back; moto then stops only if a lease started it and no
 * other live holder (a test file running beside the bench) still has one. A child process runs
 * the script because it is an ES module; the server it starts is detached and outlives it.
 */
export async function acquireMoto(timeoutMs: number): Promise<MotoLease> {
  const line = await runLease('acquire', timeoutMs);
  let result: { url?: unknown; startedByUs?: unknown };
  try {
    result = JSON.parse(line) as typeof result;
  } catch {
    throw new Error(`node scripts/lib/moto.mjs acquire printed no JSON: ${line}`);
  }
  if (typeof result.url !== 'string') throw new Error(`moto lease without a url: ${line}`);
  let released = false;
  return {
    url: result.url,
    startedByUs: result.startedByUs === true,
    release: async () => {
      if (released) return;
      released = true;
      await runLease('release', 30_000);
    },
  };
}
