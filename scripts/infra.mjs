// Local infrastructure for Hookbase without Docker: a single-node Kafka (KRaft, from Maven
// Central's jars) and a project PostgreSQL cluster (Debian's server binaries).
//
//   node scripts/infra.mjs up       start what is missing, reuse what runs (idempotent)
//   node scripts/infra.mjs status   exit 0 when both answer, 1 otherwise
//   node scripts/infra.mjs down     stop what this checkout started (never external servers)
//
// KAFKA_BROKERS / DATABASE_URL point at existing servers instead (nothing is started);
// KAFKA_PORT (19092) and PGPORT_HOOKBASE (54329) move the local ones.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureKafka, kafkaStatus, stopKafka } from './lib/kafka.mjs';
import { ensurePostgres, postgresStatus, redactUrl, stopPostgres } from './lib/postgres.mjs';

const prefixed = (log, name) => (line) => log(`[${name}] ${line}`);

/**
 * Brings Kafka and PostgreSQL up in parallel (they are independent, and Kafka's JVM start is
 * the slow part). If either fails, the error names both failures rather than just the first.
 * @returns {Promise<{ kafkaBrokers: string, databaseUrl: string, kafkaStartedByUs: boolean,
 *   postgresStartedByUs: boolean }>}
 */
export async function ensureInfra({ log = () => {} } = {}) {
  const [kafka, postgres] = await Promise.allSettled([
    ensureKafka({ log: prefixed(log, 'kafka') }),
    ensurePostgres({ log: prefixed(log, 'postgres') }),
  ]);
  const failures = [
    kafka.status === 'rejected' && `Kafka: ${kafka.reason.message}`,
    postgres.status === 'rejected' && `PostgreSQL: ${postgres.reason.message}`,
  ].filter(Boolean);
  if (failures.length > 0) throw new Error(failures.join('\n'));
  return {
    kafkaBrokers: kafka.value.brokers,
    databaseUrl: postgres.value.url,
    kafkaStartedByUs: kafka.value.startedByUs,
    postgresStartedByUs: postgres.value.startedByUs,
  };
}

/**
 * Stops only what `ensureInfra` started in this run (for `npm test` on a machine where nothing
 * was running before); servers that were already up stay up.
 */
export async function stopStartedInfra(infra, { log = () => {} } = {}) {
  const stops = [];
  if (infra?.kafkaStartedByUs) {
    stops.push(stopKafka().then(() => log('[kafka] stopped (it was started by this run)')));
  }
  if (infra?.postgresStartedByUs) {
    stops.push(stopPostgres().then(() => log('[postgres] stopped (it was started by this run)')));
  }
  await Promise.all(stops);
}

/** Stops the local Kafka broker and PostgreSQL cluster of this checkout, whoever started them. */
export async function stopInfra() {
  const [kafka, postgres] = await Promise.all([stopKafka(), stopPostgres()]);
  return { kafka, postgres };
}

async function up() {
  const log = (line) => console.log(line);
  const infra = await ensureInfra({ log });
  const how = (startedByUs) => (startedByUs ? 'started' : 'already running');
  console.log(`Kafka: ${infra.kafkaBrokers} (${how(infra.kafkaStartedByUs)})`);
  console.log(`PostgreSQL: ${redactUrl(infra.databaseUrl)} (${how(infra.postgresStartedByUs)})`);
  return 0;
}

async function down() {
  const { kafka, postgres } = await stopInfra();
  console.log(`Kafka: ${kafka.stopped ? `stopped (pid ${kafka.pid})` : 'was not running'}`);
  console.log(`PostgreSQL: ${postgres.stopped ? 'stopped' : 'was not running'}`);
  return 0;
}

async function status() {
  const [kafka, postgres] = await Promise.all([kafkaStatus(), postgresStatus()]);
  console.log(`Kafka: ${kafka.brokers}: ${kafka.detail}`);
  console.log(`PostgreSQL: ${redactUrl(postgres.url)}: ${postgres.detail}`);
  return kafka.running && postgres.running ? 0 : 1;
}

const commands = { up, down, status };

async function main(argv) {
  const command = commands[argv[0]];
  if (!command || argv.length > 1) {
    console.error('usage: node scripts/infra.mjs up|down|status');
    return 1;
  }
  return command();
}

// Run as a CLI only when executed directly; start.mjs and test.mjs import ensureInfra.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    // Explicit exit: nothing of ours should keep the loop alive, but a stray client socket must
    // not make `up` hang after it has printed its result.
    (code) => process.exit(code),
    (error) => {
      console.error(error.message);
      process.exit(1);
    },
  );
}
