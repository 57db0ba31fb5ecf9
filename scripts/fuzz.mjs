// `npm run fuzz` (and the last step of `npm test`): property-based fuzzing of the HTTP API from
// its OpenAPI document with schemathesis (PyPI, pinned, installed into .cache on first use).
// Starts the fuzz target (scripts/fuzz-target.mjs: every HTTP route and the fan-out, no
// dispatcher) on a database and topic prefix of its own, makes three organizations (two on plan
// pro, one on free) each with endpoints, an event and its message for the generated paths to name,
// fuzzes every operation with each organization's API key (the three runs side by side) and then
// with the admin token, and fails on any 5xx, undocumented status, wrong content type or response
// that breaks the document's schemas, and on any answer in 2xx to one organization's key that
// names another's data (the tenancy guard, scripts/lib/tenancy-guard.mjs, a proxy in front of
// the target).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runQuoted } from './lib/quoted-output.mjs';
import { startTenancyGuard } from './lib/tenancy-guard.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCHEMATHESIS = '4.32.5';
const venv = join(root, '.cache', `schemathesis-${SCHEMATHESIS}`);
const CHECKS =
  'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance';

function ensureSchemathesis(log) {
  const bin = join(venv, 'bin', 'schemathesis');
  if (existsSync(bin)) return bin;
  log(`installing schemathesis ${SCHEMATHESIS} into ${venv}`);
  const python = process.env.PYTHON ?? 'python3';
  for (const args of [
    [python, ['-m', 'venv', venv]],
    [join(venv, 'bin', 'pip'), ['install', '--quiet', `schemathesis==${SCHEMATHESIS}`]],
  ]) {
    const result = spawnSync(args[0], args[1], { stdio: 'inherit' });
    if (result.status !== 0) {
      throw new Error(
        `could not install schemathesis (${args[0]} ${args[1].join(' ')}): install Python 3 with venv and pip`,
      );
    }
  }
  return bin;
}

async function withDatabase(baseUrl, name, run) {
  const admin = new URL(baseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  try {
    return await run(url.toString());
  } finally {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
}

function startHookbase(env) {
  const child = spawn(process.execPath, [join(root, 'scripts/fuzz-target.mjs')], {
    env: { PATH: process.env.PATH, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Hookbase did not start:\n${output.slice(-3000)}`)),
      60_000,
    );
    const read = (chunk) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) =>
      reject(new Error(`Hookbase exited (${code}):\n${output.slice(-3000)}`)),
    );
  });
  return { child, url, logs: () => output };
}

/**
 * Most generated paths name the data the fuzz made (schemathesis dictionaries, taken 4 times in
 * 5), so the fuzz gets past the "not found" checks into each route's own logic; the rest are
 * generated, so unknown and malformed ids are still tried.
 */
function writeFuzzConfig(suffix, idsByParameter) {
  // A file of this run's own: two fuzz runs of one checkout must not read each other's ids.
  const file = join(root, '.cache', `schemathesis-fuzz-${suffix}.toml`);
  const lines = [];
  for (const [parameter, ids] of Object.entries(idsByParameter)) {
    lines.push(`[dictionaries.${parameter}]`, `values = ${JSON.stringify(ids)}`);
  }
  lines.push('[parameters]');
  for (const parameter of Object.keys(idsByParameter)) {
    lines.push(`"path.${parameter}" = { dictionary = "${parameter}", probability = 0.8 }`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Polls `read` until it gives a value, for at most `timeoutMs`. */
async function until(read, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`fuzz setup: nothing after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function json(response) {
  const body = await response.json();
  if (!response.ok) throw new Error(`${response.status} ${JSON.stringify(body)}`);
  return body.data;
}

export async function fuzz({ kafkaBrokers, databaseUrl, log = console.log }) {
  const bin = ensureSchemathesis(log);
  const suffix = randomBytes(4).toString('hex');
  const adminToken = randomBytes(24).toString('hex');
  return withDatabase(databaseUrl, `hookbase_fuzz_${suffix}`, async (url) => {
    const hookbase = startHookbase({
      DATABASE_URL: url,
      KAFKA_BROKERS: kafkaBrokers,
      HOOKBASE_TOPIC_PREFIX: `fuzz-${suffix}`,
      HOOKBASE_ADMIN_TOKEN: adminToken,
      HOOKBASE_GRPC_PORT: '0',
      PORT: '0',
      LOG_LEVEL: 'info',
      // Each run authenticates wrongly on purpose (a key on admin routes, the admin token on key
      // routes); at the default limit the address would soon be answered 429 and the fuzz would
      // reach less. The limit itself is tested in test/api/abuse-limits.test.ts.
      HOOKBASE_AUTH_FAILURES_PER_MINUTE: '1000000',
    });
    try {
      const base = await hookbase.url;
      // One call of the API as `token`: GET without a body, POST with one (or with `{}` given).
      const call = (token, path, body) =>
        fetch(`${base}${path}`, {
          method: body === undefined ? 'GET' : 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(json);
      // Three organizations, each with data for the generated paths to name: an http endpoint
      // and a polling one, and an event with its message (recorded by the fan-out; nothing
      // dispatches in the fuzz target). Every run's paths name all three's data, so each key is
      // also tried on the others' ids.
      const tenants = [];
      for (const [name, plan] of [
        ['org A', 'pro'],
        ['org B', 'pro'],
        ['free org', 'free'],
      ]) {
        const organization = await call(adminToken, '/api/organizations', { name, plan });
        const org = `/api/organizations/${organization.id}`;
        const issued = await call(adminToken, `${org}/api-keys`, { name: `fuzz ${name}` });
        const { key } = issued;
        const hook = await call(key, `${org}/webhook-endpoints`, { url: 'https://fuzz.invalid/h' });
        const polled = await call(key, `${org}/webhook-endpoints`, { kind: 'polling' });
        const event = await call(key, '/v1/events', { eventType: 'fuzz.seed', payload: {} });
        const message = await until(async () => (await call(key, `${org}/messages`))[0], 30_000);
        const application = await call(key, `${org}/applications`, { name: `fuzz ${name}` });
        await call(key, `${org}/event-types`, { name: 'fuzz.seed' });
        tenants.push({
          name,
          key,
          ids: {
            orgId: organization.id,
            endpointId: [hook.id, polled.id],
            eventId: event.id,
            messageId: message.id,
            keyId: issued.id,
            appId: application.id,
          },
        });
      }
      const config = writeFuzzConfig(suffix, {
        orgId: tenants.map((tenant) => tenant.ids.orgId),
        endpointId: tenants.flatMap((tenant) => tenant.ids.endpointId),
        eventId: tenants.map((tenant) => tenant.ids.eventId),
        messageId: tenants.map((tenant) => tenant.ids.messageId),
        keyId: tenants.map((tenant) => tenant.ids.keyId),
        appId: tenants.map((tenant) => tenant.ids.appId),
        // Every organization's catalog has this type (a name, not an id: the guard leaves it out).
        name: ['fuzz.seed'],
      });
      const guard = await startTenancyGuard(
        base,
        tenants.map((tenant) => ({
          name: tenant.name,
          key: tenant.key,
          ids: Object.values(tenant.ids).flat(),
        })),
      );
      // One schemathesis run of every operation as `token`; its lines go to `print`.
      const fuzzAs = (token, print) =>
        runQuoted(
          bin,
          [
            '--config-file',
            config,
            'run',
            `${guard.url}/openapi.json`,
            '--header',
            `Authorization: Bearer ${token}`,
            '--checks',
            CHECKS,
            '--max-examples',
            process.env.HOOKBASE_FUZZ_EXAMPLES ?? '25',
            '--seed',
            process.env.HOOKBASE_FUZZ_SEED ?? '20261130',
            // One worker: Python 3.11's AST constructor can fail spuriously under threads
            // ("SystemError: AST constructor recursion depth mismatch", CPython gh-106905), which
            // schemathesis then reports as a runtime error of the run, not of the API.
            '--workers',
            '1',
            // Generation, not the API: some path parameters (an event type's name) are free text
            // whose generated values are mostly filtered out, which hypothesis would report as
            // an error of the run; the dictionaries above name real data most of the time.
            '--suppress-health-check',
            'filter_too_much',
            '--no-color',
          ],
          // Its state (.schemathesis/) stays in .cache, out of the tree.
          { timeoutMs: 600_000, cwd: join(root, '.cache'), print },
        );
      // The organizations' runs go side by side, each a process of its own (so no threads, see
      // above): generating cases is most of their time, and one run keeps one core busy. Each
      // run's lines are printed together when it ends.
      const runs = await Promise.all(
        tenants.map(async (tenant) => {
          log(`fuzzing ${base}/openapi.json with the API key of ${tenant.name}`);
          const lines = [];
          const status = await fuzzAs(tenant.key, (line) => lines.push(line));
          return { name: tenant.name, status, lines };
        }),
      );
      let failed = 0;
      for (const run of runs) {
        log(`── the API key of ${run.name} (exit ${run.status}) ──`);
        for (const line of run.lines) console.log(line);
        if (run.status !== 0) failed++;
      }
      // The admin token goes last: it may revoke or rotate the keys the other runs use.
      log(`fuzzing ${base}/openapi.json with the admin token`);
      if ((await fuzzAs(adminToken, console.log)) !== 0) failed++;
      rmSync(config, { force: true });
      await guard.close();
      for (const violation of guard.violations) {
        log(
          `✘ cross-tenant: ${violation.method} ${violation.path} answered ${violation.status} with ${violation.id} of ${violation.tenant}`,
        );
      }
      log(
        `tenancy guard: ${guard.counts.byTenantKeys} of ${guard.counts.answers} answers were to an organization's key; ${guard.violations.length} named another's data`,
      );
      // A guard that saw no tenant traffic proves nothing.
      if (guard.violations.length > 0 || guard.counts.byTenantKeys === 0) failed++;
      if (failed > 0) log(`Hookbase's last log lines:\n${hookbase.logs().slice(-4000)}`);
      return failed === 0 ? 0 : 1;
    } finally {
      hookbase.child.kill('SIGTERM');
      await new Promise((resolve) => {
        if (hookbase.child.exitCode !== null) return resolve();
        const timer = setTimeout(() => hookbase.child.kill('SIGKILL'), 15_000);
        hookbase.child.on('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { checkRuntime } = await import('./lib/runtime.mjs');
  try {
    checkRuntime();
  } catch (error) {
    console.error(`✘ ${error.message}`);
    process.exit(1);
  }
  const { build } = await import('./build.mjs');
  const { ensureInfra, stopStartedInfra } = await import('./infra.mjs');
  const log = (line) => console.log(`  ${line}`);
  const infra = await ensureInfra({ log });
  let code = 1;
  try {
    await build();
    code = await fuzz({ ...infra, log });
  } catch (error) {
    console.error(`✘ ${error.message}`);
  } finally {
    await stopStartedInfra(infra, { log });
  }
  process.exit(code);
}
