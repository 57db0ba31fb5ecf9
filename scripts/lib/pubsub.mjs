// Google's Pub/Sub fake (Go module cloud.google.com/go/pubsub/v2/pstest) as the local Pub/Sub:
// deploy/pubsub-fake is a small Go program serving it, built once with `go build` (modules from
// the Go module proxy) into .cache/pubsub-fake-<version>/, started on 127.0.0.1:$PUBSUB_PORT
// (18085 by default), reused when the port already answers as Pub/Sub. State is in memory.
//
//   node scripts/lib/pubsub.mjs up | down | status | prepare (build only)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect, constants } from 'node:http2';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localEmulator, root } from './emulator.mjs';
import { lastLines, run } from './wait.mjs';

const sourceDir = join(root, 'deploy', 'pubsub-fake');
const sources = ['go.mod', 'go.sum', 'main.go'];

/** The pstest version deploy/pubsub-fake/go.mod requires (the cache directory is named by it). */
function pstestVersion() {
  const goMod = readFileSync(join(sourceDir, 'go.mod'), 'utf8');
  const match = /cloud\.google\.com\/go\/pubsub\/v2 (v\S+)/.exec(goMod);
  if (!match) throw new Error(`${join(sourceDir, 'go.mod')} does not require pubsub/v2`);
  return match[1];
}

export const PSTEST_VERSION = pstestVersion();

const buildDir = join(root, '.cache', `pubsub-fake-${PSTEST_VERSION}`);
const binary = join(buildDir, 'pubsub-fake');
const marker = join(buildDir, '.source-digest');

/** Identifies the sources a binary was built from: an edit of main.go must rebuild it. */
function sourceDigest() {
  const hash = createHash('sha256');
  for (const file of sources) hash.update(readFileSync(join(sourceDir, file)));
  return hash.digest('hex');
}

function requireGo() {
  const result = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new Error(
      'the Pub/Sub fake is built with Go (1.26 or newer), and `go` was not found on PATH. ' +
        'Install Go, or set PUBSUB_PORT to a running Pub/Sub emulator.',
    );
  }
}

async function build(log) {
  const digest = sourceDigest();
  try {
    if (existsSync(binary) && readFileSync(marker, 'utf8').trim() === digest) return;
  } catch {
    // no marker: build
  }
  requireGo();
  log(`building the Pub/Sub fake (pstest ${PSTEST_VERSION}) into ${buildDir} (once)`);
  mkdirSync(buildDir, { recursive: true });
  // Built beside the target and renamed into place: an interrupted build leaves no half binary.
  const staging = `${binary}.tmp-${process.pid}`;
  const { code, output } = await run('go', ['build', '-trimpath', '-o', staging, '.'], {
    cwd: sourceDir,
    env: { ...process.env, CGO_ENABLED: '0' },
  });
  if (code !== 0) {
    rmSync(staging, { force: true });
    throw new Error(`go build of deploy/pubsub-fake failed (exit ${code}):\n${lastLines(output)}`);
  }
  renameSync(staging, binary);
  writeFileSync(marker, `${digest}\n`);
}

/**
 * True when the port answers a Pub/Sub gRPC call: ListTopics of a made-up project over plain
 * HTTP/2, with grpc-status 0. Hand-encoded: a gRPC frame is a 5-byte prefix (no compression,
 * big-endian length) and ListTopicsRequest's field 1 (`project`) is a length-delimited string.
 */
function probe(port) {
  return new Promise((resolve) => {
    const project = Buffer.from('projects/hookbase-probe');
    const message = Buffer.concat([Buffer.from([0x0a, project.length]), project]);
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, 5);
    let settled = false;
    const session = connect(`http://127.0.0.1:${port}`);
    const done = (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(false), 1000);
    session.on('error', () => done(false));
    const stream = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: '/google.pubsub.v1.Publisher/ListTopics',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    let status;
    stream.on('response', (headers) => {
      if (headers[constants.HTTP2_HEADER_STATUS] !== 200) done(false);
      // A trailers-only response carries grpc-status in the headers.
      if (headers['grpc-status'] !== undefined) status = headers['grpc-status'];
    });
    stream.on('trailers', (trailers) => (status = trailers['grpc-status']));
    stream.on('data', () => {});
    stream.on('end', () => done(status === '0'));
    stream.on('error', () => done(false));
    stream.end(frame);
  });
}

const pubsub = localEmulator({
  name: 'pubsub',
  title: `the Pub/Sub fake (pstest ${PSTEST_VERSION})`,
  portEnv: 'PUBSUB_PORT',
  defaultPort: 18085,
  probe,
  commandMarker: binary,
  readyTimeoutMs: 20_000,
  describe: (port) => ({ host: `127.0.0.1:${port}` }),
  prepare: async (log) => {
    await build(log);
    return {
      command: binary,
      args: (port) => ['-host', '127.0.0.1', '-port', String(port)],
    };
  },
});

/**
 * Makes the Pub/Sub fake answer on 127.0.0.1:$PUBSUB_PORT, building and starting it when needed.
 * @returns {Promise<{ host: string, startedByUs: boolean }>}
 */
export function ensurePubsub({ log = () => {} } = {}) {
  return pubsub.ensure({ log });
}

/** Stops the Pub/Sub fake this checkout started; never one it did not start. */
export function stopPubsub() {
  return pubsub.stop();
}

export const pubsubStatus = pubsub.status;
export const acquirePubsub = pubsub.acquire;
export const releasePubsub = pubsub.release;
export const pubsubPaths = { binary, ...pubsub.paths };

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exit(await pubsub.cli(process.argv.slice(2)));
}
