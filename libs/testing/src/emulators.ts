import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/** Time for a first run on a fresh machine: installing moto or building the Pub/Sub fake. */
export const EMULATOR_SETUP_TIMEOUT_MS = 300_000;

export interface EmulatorLease {
  /** Whether this call started the emulator (it is then stopped when its last user releases). */
  startedByUs: boolean;
  /** Gives the emulator back; the last user of one that a test started stops it. */
  release(): Promise<void>;
}

/**
 * Runs `node scripts/lib/<script> <command> <our pid>` and returns the JSON line it prints. The
 * scripts are ES modules, which Jest's CommonJS runtime cannot import: a child process runs them,
 * and the emulator it starts is detached, so it outlives that child.
 */
function runLease(script: string, command: 'acquire' | 'release'): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(ROOT, 'scripts', 'lib', script), command, String(process.pid)],
      { cwd: ROOT, timeout: EMULATOR_SETUP_TIMEOUT_MS - 10_000, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(
              `node scripts/lib/${script} ${command} failed (${error.message.split('\n')[0]}):\n${stderr.trim()}`,
            ),
          );
          return;
        }
        const line = stdout.trim().split('\n').at(-1) ?? '';
        try {
          resolve(JSON.parse(line));
        } catch {
          reject(new Error(`node scripts/lib/${script} ${command} printed no JSON:\n${stdout}`));
        }
      },
    );
  });
}

function lease(script: string) {
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    await runLease(script, 'release');
  };
}

/**
 * moto's server (SQS, SNS, EventBridge, S3) for this test file: started when nothing answers on
 * MOTO_PORT (installing moto into .cache on first use), reused otherwise. Call `release()` in
 * afterAll.
 */
export async function ensureMoto(): Promise<EmulatorLease & { url: string }> {
  const result = (await runLease('moto.mjs', 'acquire')) as { url: string; startedByUs: boolean };
  return { ...result, release: lease('moto.mjs') };
}

/**
 * Google's Pub/Sub fake for this test file: started when nothing answers on PUBSUB_PORT (built
 * with Go into .cache on first use), reused otherwise. `host` is `127.0.0.1:<port>`, what
 * `apiEndpoint` takes. Call `release()` in afterAll.
 */
export async function ensurePubsub(): Promise<EmulatorLease & { host: string }> {
  const result = (await runLease('pubsub.mjs', 'acquire')) as {
    host: string;
    startedByUs: boolean;
  };
  return { ...result, release: lease('pubsub.mjs') };
}

/** A loopback port nothing listens on (just released), for "the service is unreachable" tests. */
export function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Credentials moto accepts (it checks none); the SDKs insist on having some. A fresh object each
 * time: the AWS SDK writes into the credentials object it is given.
 */
export function emulatorAwsCredentials(): { accessKeyId: string; secretAccessKey: string } {
  return { accessKeyId: 'AKIAHOOKBASETESTKEY0', secretAccessKey: 'hookbase-test-secret' };
}

let googleTestKey: string | undefined;

/**
 * A Google service account key of our own making for the Pub/Sub fake: Hookbase requires a cloud
 * endpoint to carry credentials, and over an emulator's plain gRPC (an `http://` endpoint) the
 * client sends none of them, so the key is never used to sign anything.
 */
export function emulatorGoogleCredentials(): { clientEmail: string; privateKey: string } {
  googleTestKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  return {
    clientEmail: 'hookbase-test@hookbase-test.iam.gserviceaccount.com',
    privateKey: googleTestKey,
  };
}
