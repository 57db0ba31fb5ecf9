// `npm start`: the whole system on this machine. Starts (or reuses) Kafka and PostgreSQL, builds,
// and runs every service in one process (apps/standalone), then says where everything is.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';
import { ensureInfra } from './infra.mjs';
import { checkRuntime } from './lib/runtime.mjs';
import { banner } from './lib/start-banner.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/**
 * A value kept in `.data/<name>` per checkout, so it stays the same across restarts: the one the
 * environment gives, else the kept one, else a new one (written readable by its owner only).
 */
function keptValue(variable, name, generate) {
  if (process.env[variable]) return { value: process.env[variable], generated: false };
  const file = join(root, '.data', name);
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), generated: true };
  mkdirSync(dirname(file), { recursive: true });
  const value = generate();
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return { value, generated: true };
}

const adminToken = () =>
  keptValue(
    'HOOKBASE_ADMIN_TOKEN',
    'admin-token',
    () => `hbadmin_${randomBytes(24).toString('base64url')}`,
  );

// Seals endpoint signing secrets and cloud credentials at rest, and keys the poll cursors.
const credentialsKey = () =>
  keptValue('HOOKBASE_CREDENTIALS_KEY', 'credentials-key', () =>
    randomBytes(32).toString('base64'),
  );

async function main() {
  checkRuntime();
  const infra = await ensureInfra({ log: (line) => console.log(line) });
  const files = await build();
  console.log(`built ${files} files`);
  const { value: token, generated } = adminToken();
  const { value: key, generated: keyGenerated } = credentialsKey();
  if (keyGenerated) console.log('credentials key: generated, kept in .data/credentials-key');
  const env = {
    ...process.env,
    DATABASE_URL: infra.databaseUrl,
    KAFKA_BROKERS: infra.kafkaBrokers,
    HOOKBASE_ADMIN_TOKEN: token,
    HOOKBASE_CREDENTIALS_KEY: key,
    HOOKBASE_ALLOW_PRIVATE_TARGETS: process.env.HOOKBASE_ALLOW_PRIVATE_TARGETS ?? 'true',
    // Readable lines on this terminal; a deployment's collectors get JSON (the default).
    LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty',
  };
  const child = spawn(process.execPath, [join(root, 'dist/apps/standalone/src/main.js')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let announced = false;
  let grpc;
  child.stdout.on('data', (chunk) => {
    process.stdout.write(chunk);
    // The log may be coloured: read the address from the text without its escape codes.
    const text = chunk.toString().replace(ANSI_COLOUR, '');
    grpc = /gRPC listening on (\S+)/.exec(text)?.[1] ?? grpc;
    const match = !announced && /listening on (http:\/\/\S+)/.exec(text);
    if (match) {
      announced = true;
      console.log(banner(match[1], grpc, token, generated, infra));
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill('SIGTERM'));
  child.on('exit', (code) => process.exit(code ?? 0));
}

main().catch((error) => {
  console.error(`✘ ${error.message}`);
  process.exit(1);
});
