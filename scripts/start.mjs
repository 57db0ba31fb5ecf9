// `npm start`: the whole system on this machine. Starts (or reuses) Kafka and PostgreSQL, builds,
// and runs every service in one process (apps/standalone), then says where everything is.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';
import { ensureInfra } from './infra.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** Keeps one admin token per checkout, so it stays the same across restarts. */
function adminToken() {
  if (process.env.HOOKBASE_ADMIN_TOKEN)
    return { token: process.env.HOOKBASE_ADMIN_TOKEN, generated: false };
  const file = join(root, '.data', 'admin-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), generated: true };
  mkdirSync(dirname(file), { recursive: true });
  const token = `hbadmin_${randomBytes(24).toString('base64url')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, generated: true };
}

function banner(url, grpc, token, generated, infra) {
  const api = `${url}/api`;
  return `
────────────────────────────────────────────────────────────────────────────
 Hookbase is running
   API and ingest   ${url}        (health: ${url}/health)
   gRPC ingest      ${grpc ?? 'off'}   (hookbase.v1.Ingest, proto/hookbase/v1/ingest.proto)
   Kafka            ${infra.kafkaBrokers}
   PostgreSQL       ${infra.databaseUrl.replace(/:[^:@/]+@/, ':***@')}
   Dashboard        not built yet (see the issues); use the API below
   Admin token      ${token}${generated ? '   (generated, kept in .data/admin-token)' : ''}
   Private targets  allowed (HOOKBASE_ALLOW_PRIVATE_TARGETS=true, for local receivers)

 Quickstart (another terminal):
   npm run receiver                      # a local webhook receiver on :4000
   ADMIN=${token}
   ORG=$(curl -s -X POST ${api}/organizations -H "Authorization: Bearer $ADMIN" \\
          -H 'content-type: application/json' -d '{"name":"Acme","plan":"pro"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).data.id')
   KEY=$(curl -s -X POST ${api}/organizations/$ORG/api-keys -H "Authorization: Bearer $ADMIN" \\
          | node -pe 'JSON.parse(require("fs").readFileSync(0)).data.key')
   curl -s -X POST ${api}/organizations/$ORG/webhook-endpoints -H "Authorization: Bearer $KEY" \\
        -H 'content-type: application/json' -d '{"url":"http://127.0.0.1:4000/hooks"}'
   curl -s -X POST ${url}/v1/events -H "Authorization: Bearer $KEY" \\
        -H 'content-type: application/json' -d '{"eventType":"order.created","payload":{"id":1}}'
   curl -s "${api}/organizations/$ORG/messages" -H "Authorization: Bearer $KEY"
 Stop with Ctrl-C (Kafka and PostgreSQL keep running: npm run infra:down).
────────────────────────────────────────────────────────────────────────────`;
}

async function main() {
  const infra = await ensureInfra({ log: (line) => console.log(line) });
  const files = await build();
  console.log(`built ${files} files`);
  const { token, generated } = adminToken();
  const env = {
    ...process.env,
    DATABASE_URL: infra.databaseUrl,
    KAFKA_BROKERS: infra.kafkaBrokers,
    HOOKBASE_ADMIN_TOKEN: token,
    HOOKBASE_ALLOW_PRIVATE_TARGETS: process.env.HOOKBASE_ALLOW_PRIVATE_TARGETS ?? 'true',
  };
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', join(root, 'dist/apps/standalone/src/main.js')],
    { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
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
