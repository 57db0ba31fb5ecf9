// `node scripts/outbox-measure.mjs [--events N]`: measures the outbox relay (libs/sdk/src/outbox)
// against a real Hookbase stack (the standalone process, as the integration tests start it) and a
// producer database of its own. Prints three figures:
// - producer: transactions per second from 4 connections with and without a publish each;
// - throughput: a backlog of N events (in transactions of 10) written while no relay runs, then
//   drained by one relay: events accepted by Hookbase per second;
// - delay: events committed one per transaction every 20 ms while the relay runs; for each, the
//   time from its write (created_at; the COMMIT follows at once) to the relay's mark after
//   Hookbase accepted it (sent_at), both PostgreSQL clock times: an upper bound of commit →
//   acceptance, as p50/p95/p99/max.
// Not a test: figures depend on the machine. Starts (or reuses) Kafka and PostgreSQL like npm test.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { build } from './build.mjs';
import { ensureInfra, stopStartedInfra } from './infra.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const argIndex = process.argv.indexOf('--events');
const EVENTS = argIndex > 0 ? Number(process.argv[argIndex + 1]) : 2000;
const LATENCY_EVENTS = 200;

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

/** The standalone Hookbase process on a fresh database, as libs/testing's startStack runs it. */
async function startStandalone(testing, infra) {
  const { randomBytes } = await import('node:crypto');
  const { spawn } = await import('node:child_process');
  const database = await testing.createTestDatabase(infra.databaseUrl);
  const adminToken = randomBytes(24).toString('hex');
  const env = {
    PATH: process.env.PATH ?? '',
    NO_COLOR: '1',
    DATABASE_URL: database.url,
    KAFKA_BROKERS: infra.kafkaBrokers,
    HOOKBASE_TOPIC_PREFIX: `measure-${randomBytes(4).toString('hex')}`,
    HOOKBASE_ADMIN_TOKEN: adminToken,
    HOOKBASE_CREDENTIALS_KEY: randomBytes(32).toString('base64'),
    HOOKBASE_RUN_MIGRATIONS: 'true',
    PORT: '0',
    HOOKBASE_GRPC_PORT: '0',
    LOG_LEVEL: 'info',
  };
  const child = spawn(
    process.execPath,
    [join(root, 'dist', 'apps', 'standalone', 'src', 'main.js')],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const hookbase = new testing.HookbaseProcess(child, env);
  const [, url] = await hookbase.waitForLine(/listening on (http:\/\/\S+)/, 60_000);
  return {
    url,
    adminToken,
    async stop() {
      await hookbase.stop();
      await database.drop();
    },
  };
}

async function main() {
  const log = (line) => console.error(`  ${line}`);
  const infra = await ensureInfra({ log });
  let stack;
  let producer;
  let pool;
  try {
    await build();
    process.env.HOOKBASE_TEST_DATABASE_URL = infra.databaseUrl;
    process.env.HOOKBASE_TEST_KAFKA_BROKERS = infra.kafkaBrokers;
    const testing = require(join(root, 'dist', 'libs', 'testing', 'src', 'index.js'));
    const outbox = require(join(root, 'dist', 'libs', 'sdk', 'src', 'index.js'));
    const { Pool, Client } = require('pg');
    await testing.prepareTemplateDatabase(infra.databaseUrl);
    stack = await startStandalone(testing, infra);
    const { apiKey } = await testing.createTenant(stack.url, stack.adminToken, 'pro');

    const base = new URL(infra.databaseUrl);
    const name = `producer_measure_${process.pid}`;
    const adminUrl = new URL(base);
    adminUrl.pathname = '/postgres';
    const admin = new Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    producer = { admin, name };
    const url = new URL(base);
    url.pathname = `/${name}`;
    pool = new Pool({ connectionString: url.toString(), max: 5 });
    pool.on('error', () => undefined); // idle connections ended by the final DROP DATABASE
    await pool.query(
      readFileSync(join(root, 'libs/sdk/src/outbox/migrations/0001_hookbase_outbox.sql'), 'utf8'),
    );
    const relay = () =>
      new outbox.OutboxRelay({
        database: url.toString(),
        sender: new outbox.HookbaseEventSender(new outbox.Hookbase({ baseUrl: stack.url, apiKey })),
        idleMs: 1000,
      });
    const commit = async (labels) => {
      const tx = await pool.connect();
      try {
        await tx.query('BEGIN');
        for (const label of labels) {
          await outbox.publish({ eventType: 'measure', payload: { label } }, { transaction: tx });
        }
        await tx.query('COMMIT');
      } finally {
        tx.release();
      }
    };
    const unsent = async () =>
      Number(
        (await pool.query('SELECT count(*) FROM hookbase_outbox WHERE sent_at IS NULL')).rows[0]
          .count,
      );

    // The producer's cost: transactions committed per second from 4 connections, each writing
    // one row to a table of its own, with and without a publish (publishing ones commit one
    // after another under the numbering lock).
    await pool.query('CREATE TABLE plain (n int)');
    const producerRate = async (withPublish) => {
      const perWorker = 150;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 4 }, async (_, worker) => {
          for (let n = 0; n < perWorker; n++) {
            const tx = await pool.connect();
            try {
              await tx.query('BEGIN');
              await tx.query('INSERT INTO plain VALUES ($1)', [n]);
              if (withPublish) {
                await outbox.publish(
                  { eventType: 'measure', payload: { label: `rate-${worker}-${n}` } },
                  { transaction: tx },
                );
              }
              await tx.query('COMMIT');
            } finally {
              tx.release();
            }
          }
        }),
      );
      return Math.round((4 * perWorker) / ((performance.now() - started) / 1000));
    };
    const plainRate = await producerRate(false);
    const publishRate = await producerRate(true);
    console.log(
      `producer: ${plainRate} transactions/s without publish, ${publishRate} with one publish each (4 connections)`,
    );
    await pool.query('TRUNCATE hookbase_outbox, hookbase_outbox_commits');

    // Throughput: drain a backlog.
    for (let n = 0; n < EVENTS; n += 10) {
      await commit(Array.from({ length: Math.min(10, EVENTS - n) }, (_, i) => `backlog-${n + i}`));
    }
    const drainer = relay();
    const started = performance.now();
    drainer.start();
    while ((await unsent()) > 0) await new Promise((r) => setTimeout(r, 50));
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `throughput: ${EVENTS} events drained in ${seconds.toFixed(2)} s = ${Math.round(EVENTS / seconds)} events/s`,
    );

    // Delay from commit to acceptance, the relay idle and woken by each commit.
    await pool.query('TRUNCATE hookbase_outbox, hookbase_outbox_commits');
    const commitStamps = [];
    for (let n = 0; n < LATENCY_EVENTS; n++) {
      await commit([`latency-${n}`]);
      await new Promise((r) => setTimeout(r, 20));
    }
    while ((await unsent()) > 0) await new Promise((r) => setTimeout(r, 50));
    const { rows } = await pool.query(
      `SELECT extract(epoch FROM (o.sent_at - o.created_at)) * 1000 AS ms FROM hookbase_outbox o`,
    );
    commitStamps.push(...rows.map((row) => Number(row.ms)));
    await drainer.stop();
    const sorted = commitStamps.sort((a, b) => a - b);
    console.log(
      `commit → accepted, upper bound (${sorted.length} events, one per transaction every 20 ms): ` +
        `p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p95 ${percentile(sorted, 0.95).toFixed(1)} ms, ` +
        `p99 ${percentile(sorted, 0.99).toFixed(1)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms`,
    );
  } finally {
    await pool?.end();
    if (producer) {
      await producer.admin.query(`DROP DATABASE IF EXISTS ${producer.name} WITH (FORCE)`);
      await producer.admin.end();
    }
    await stack?.stop();
    await stopStartedInfra(infra, { log });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`✘ ${error.stack ?? error.message}`);
    process.exit(1);
  },
);
