import { parseArgs } from 'node:util';
import { parseFailWith } from './behaviour';

export const SCENARIOS = [
  'ingest-rest',
  'ingest-batch',
  'ingest-grpc',
  'ingest-kafka',
  'e2e',
  'fifo-rtt',
  'fifo-many',
  'isolation',
  'kafka-client',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Endpoint kinds the e2e scenario can deliver to: the bench's receiver, or moto. */
export const E2E_KINDS = ['http', 'sqs', 's3'] as const;
export type E2eKind = (typeof E2E_KINDS)[number];

export class UsageError extends Error {}

/** Everything a scenario reads, resolved: the scenario's defaults overridden by the command line. */
export interface BenchOptions {
  scenario: ScenarioName;
  brokers: string;
  databaseUrl: string;
  /** Drive a Hookbase that is already running instead of starting one. */
  attach:
    { url: string; adminToken: string; topicPrefix: string; pid: number | undefined } | undefined;
  topology: 'standalone' | 'split';
  stackEnv: Record<string, string>;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  resultsDir: string;
  /** Hard bound on the whole scenario, setup and teardown included. */
  maxSeconds: number;
  drainTimeoutSeconds: number;
  durationSeconds: number;
  rate: number;
  endpoints: number;
  maxInFlight: number;
  payloadBytes: number;
  receiverLatencyMs: number;
  failRate: number;
  failWith: number | 'drop';
  steps: number[];
  stepSeconds: number;
  /** Events per request of the batch calls (ingest-batch, ingest-grpc's PublishBatch). */
  batchSizes: number[];
  /** Requests in flight, one step each, for the batch calls. */
  batchSteps: number[];
  /** A running Hookbase's gRPC ingest, host:port (with --url; a started stack picks its own). */
  grpcAddress: string | undefined;
  /** ingest-kafka: organizations the direct producer writes for, spread over the partitions. */
  organizations: number;
  events: number;
  eventsPerEndpoint: number;
  healthy: number;
  neighbourRate: number;
  neighbourLatencyMs: number;
  /**
   * isolation: messages queued behind the failing neighbour's head before run 2 (null: 50,000
   * with --fifo, none without).
   */
  neighbourBacklog: number | null;
  /** isolation: rounds of a run without the neighbour's load, then one with it. */
  rounds: number;
  fifo: boolean;
  nonFifo: boolean;
  /**
   * isolation --tenants: the neighbour is another organization with `neighbours` endpoints that
   * never answer (plain endpoints), beside the healthy organization's.
   */
  tenants: boolean;
  neighbours: number;
  records: number;
  messageBytes: number;
  partitions: number;
  batch: number;
  /** e2e: the endpoints' kind (http to the bench's receiver, or sqs / s3 in moto). */
  kind: E2eKind;
  /** e2e with a cloud kind: also run http endpoints at the same settings, in the same stack. */
  httpBeside: boolean;
}

type Tunable = Omit<
  BenchOptions,
  'scenario' | 'brokers' | 'databaseUrl' | 'attach' | 'stackEnv' | 'resultsDir'
>;

const COMMON: Tunable = {
  topology: 'standalone',
  logLevel: 'warn',
  maxSeconds: 175,
  drainTimeoutSeconds: 60,
  durationSeconds: 10,
  rate: 100,
  endpoints: 1,
  maxInFlight: 64,
  payloadBytes: 256,
  receiverLatencyMs: 0,
  failRate: 0,
  failWith: 503,
  steps: [1, 8, 32, 128],
  stepSeconds: 4,
  batchSizes: [100, 500],
  batchSteps: [1, 4, 16],
  grpcAddress: undefined,
  organizations: 6,
  events: 300,
  eventsPerEndpoint: 10,
  healthy: 8,
  neighbourRate: 50,
  neighbourLatencyMs: 0,
  neighbourBacklog: null,
  rounds: 3,
  fifo: false,
  nonFifo: false,
  tenants: false,
  neighbours: 1,
  records: 100_000,
  messageBytes: 1024,
  partitions: 3,
  batch: 500,
  kind: 'http',
  httpBeside: true,
};

/** e2e --kind sqs|s3: endpoints when --endpoints is not given (moto takes ~100 sends/s here). */
export const CLOUD_E2E_ENDPOINTS = 50;

/** Each scenario's defaults: chosen so that it finishes in under 3 minutes on a 2-core machine. */
/** isolation (FIFO): events/s to each healthy lane, unless --rate says otherwise. */
export const ISOLATION_FIFO_RATE = 50;

/**
 * isolation --tenants: 30 endpoints of another organization that never answer (held past the
 * delivery timeout) receive 2 events/s each, 60 attempts/s: more than the dispatch pool (256)
 * can end at a 5 s timeout (51/s), so they would keep it full. The healthy organization's 8
 * endpoints get 25 events/s (200 messages/s), well within what the machine carries. Five rounds:
 * a run's p99 is about its 16th slowest delivery, so one pause of the machine decides it, and
 * consecutive runs alone differ by more than the 10 % the scenario checks; the median of five
 * rounds is steadier than that of three.
 */
export const ISOLATION_TENANT_DEFAULTS: Partial<Tunable> = {
  fifo: false,
  rounds: 5,
  neighbours: 30,
  rate: 25,
  neighbourRate: 2,
  neighbourLatencyMs: 60_000,
};

/**
 * The stack of isolation --tenants unless --stack-env says otherwise: a hanging attempt ends
 * after 5 s (not 15 s, so the scenario stays short), and the hanging endpoints' circuit breakers
 * stay closed, so they keep taking slots in every round (otherwise they open after the first
 * timeouts and the later rounds compare nothing).
 */
export const ISOLATION_TENANT_STACK_ENV: Record<string, string> = {
  HOOKBASE_DELIVERY_TIMEOUT_MS: '5000',
  HOOKBASE_CIRCUIT_FAILURE_THRESHOLD: '1000',
};

export const SCENARIO_DEFAULTS: Record<ScenarioName, Partial<Tunable>> = {
  'ingest-rest': { endpoints: 0, steps: [1, 8, 32, 128], stepSeconds: 4, records: 100_000 },
  'ingest-batch': {
    endpoints: 0,
    batchSizes: [100, 500],
    batchSteps: [1, 4, 16],
    records: 100_000,
  },
  'ingest-grpc': {
    endpoints: 0,
    steps: [1, 8, 32, 128],
    batchSizes: [100, 500],
    batchSteps: [1, 4, 16],
    records: 100_000,
  },
  // rate 0: the paced phase runs at half the rate the fan-out reached in the burst.
  'ingest-kafka': {
    endpoints: 0,
    events: 100_000,
    organizations: 6,
    rate: 0,
    durationSeconds: 8,
    records: 100_000,
  },
  e2e: { endpoints: 1000, rate: 1, durationSeconds: 20, drainTimeoutSeconds: 90 },
  'fifo-rtt': { endpoints: 1, events: 500, receiverLatencyMs: 10 },
  'fifo-many': { endpoints: 500, eventsPerEndpoint: 10, receiverLatencyMs: 10, maxInFlight: 32 },
  isolation: { healthy: 8, rate: 150, durationSeconds: 8, neighbourRate: 50 },
  'kafka-client': { records: 200_000, messageBytes: 1024, partitions: 3, batch: 500 },
};

export const USAGE = `usage: npm run bench -- <scenario|all> [options]

scenarios
  ingest-rest   POST /v1/events, one event per request, at rising concurrency (--steps)
  ingest-batch  POST /v1/events/batch: --batch-sizes events per request at --batch-steps in flight
  ingest-grpc   gRPC hookbase.v1.Ingest: Publish at --steps, PublishBatch as ingest-batch
  ingest-kafka  envelopes produced straight onto <prefix>.events, timed to the fan-out's commit
  e2e           fan-out to --endpoints http endpoints (1000), --rate events/s for --duration s;
                --kind sqs|s3: to queues / a bucket in moto (50 endpoints), then http beside it
  fifo-rtt      one FIFO endpoint, receiver latency 10 ms: ordered deliveries/s against 1/RTT
  fifo-many     --endpoints FIFO endpoints (500): aggregate ordered deliveries/s, order verified
  isolation     healthy FIFO lanes sharing a partition with an always-503 FIFO neighbour and
                50,000 messages queued behind it, with/without (--non-fifo: plain endpoints;
                --tenants: another organization's 30 endpoints that never answer)
  kafka-client  raw produce/consume of kafkajs beside @platformatic/kafka
  all           every scenario in turn (one that cannot run here is reported as not run)

stack
  --url URL --admin-token T    drive a running Hookbase instead of starting one
  --topic-prefix P             its topic prefix (hookbase)   --pid N   its process, for RSS
  --grpc-address HOST:PORT     its gRPC ingest (127.0.0.1:50051), for ingest-grpc
  --topology standalone|split  one process (as npm start) or one per service (standalone)
  --stack-env KEY=VALUE        extra environment for started services (repeatable)
  --log-level L                services' LOG_LEVEL (warn)
  --brokers B --database-url U infrastructure (default: what scripts/bench.mjs ensured)

load
  --duration S --rate N        open-loop load: N events/s for S seconds (e2e: 1/s for 20 s)
  --endpoints N                endpoints to create (per scenario)
  --max-in-flight N            publishes in flight at most (64)
  --payload-bytes N            event payload size (256)
  --steps 1,8,32,128           ingest-rest concurrency steps   --step-seconds S (4)
  --batch-sizes 100,500        events per batch request   --batch-steps 1,4,16  batch concurrency
  --records N --batch N        ingest-*: the raw kafkajs produce baseline's records (100000),
                               sent --batch at a time (500; ingest-kafka's producer too)
  --events N --organizations N ingest-kafka: burst size (100000), organizations (6)
  --rate N --duration S        ingest-kafka: paced phase (default half the burst's rate, 8 s)
  --events N                   fifo-rtt events (500)   --events-per-endpoint N  fifo-many (10)
  --healthy N --neighbour-rate N --neighbour-latency MS            isolation (rate: 50 each,
                               150 with --non-fifo)
  --neighbour-backlog N        isolation: messages queued behind the failing head before run 2
                               (50000 on FIFO lanes, 0 with --non-fifo)
  --rounds N                   isolation: rounds of a run without, then with the neighbour (3; 5 with --tenants)
  --tenants --neighbours N     isolation: the neighbour is another organization with N (30)
                               plain endpoints that never answer; healthy 25 events/s, neighbour
                               2 events/s to each of its endpoints, delivery timeout 5 s
  --records N (200000) --message-bytes N (1024) --partitions N (3) --batch N (500)  kafka-client
  --kind http|sqs|s3           e2e: endpoint kind (http); sqs: one queue per endpoint, s3: one
                               bucket, a prefix per endpoint, both in moto (started if needed)
  --no-http-run                e2e --kind sqs|s3: skip the http run at the same settings
  --non-fifo                   fifo-rtt, fifo-many: plain endpoints (harness self-check only);
                               isolation: plain endpoints (the non-FIFO case)

receiver
  --receiver-latency MS        answer after MS milliseconds (0; fifo scenarios 10)
  --fail-rate F                fail this share of first attempts (later attempts succeed)
  --fail-status S|drop         with this status (503), or drop the connection

bounds and output
  --drain-timeout S            wait at most S s for deliveries after the load (60; e2e 90)
  --max-seconds S              hard bound on one scenario (175)
  --results-dir DIR            where JSON and SVG results go (bench/results)
`;

/** A comma-separated list of integers, each within [min, max]. */
function numberList(name: string, value: string, min: number, max: number): number[] {
  return value.split(',').map((item) => number(name, item.trim(), min, max));
}

function number(name: string, value: string, min: number, max: number, integer = true): number {
  const parsed = Number(value);
  if (
    !Number.isFinite(parsed) ||
    parsed < min ||
    parsed > max ||
    (integer && !Number.isInteger(parsed))
  ) {
    throw new UsageError(
      `--${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got "${value}"`,
    );
  }
  return parsed;
}

export interface CommandLine {
  help: boolean;
  target: ScenarioName | 'all';
  scenarios: ScenarioName[];
  optionsFor(scenario: ScenarioName): BenchOptions;
}

export function parseCommandLine(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): CommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        url: { type: 'string' },
        'admin-token': { type: 'string' },
        'topic-prefix': { type: 'string' },
        pid: { type: 'string' },
        topology: { type: 'string' },
        'stack-env': { type: 'string', multiple: true },
        'log-level': { type: 'string' },
        brokers: { type: 'string' },
        'database-url': { type: 'string' },
        'results-dir': { type: 'string' },
        'max-seconds': { type: 'string' },
        'drain-timeout': { type: 'string' },
        duration: { type: 'string' },
        rate: { type: 'string' },
        endpoints: { type: 'string' },
        'max-in-flight': { type: 'string' },
        'payload-bytes': { type: 'string' },
        'receiver-latency': { type: 'string' },
        'fail-rate': { type: 'string' },
        'fail-status': { type: 'string' },
        steps: { type: 'string' },
        'step-seconds': { type: 'string' },
        'batch-sizes': { type: 'string' },
        'batch-steps': { type: 'string' },
        'grpc-address': { type: 'string' },
        organizations: { type: 'string' },
        events: { type: 'string' },
        'events-per-endpoint': { type: 'string' },
        healthy: { type: 'string' },
        'neighbour-rate': { type: 'string' },
        'neighbour-latency': { type: 'string' },
        'neighbour-backlog': { type: 'string' },
        rounds: { type: 'string' },
        fifo: { type: 'boolean' },
        'non-fifo': { type: 'boolean' },
        tenants: { type: 'boolean' },
        neighbours: { type: 'string' },
        records: { type: 'string' },
        'message-bytes': { type: 'string' },
        partitions: { type: 'string' },
        batch: { type: 'string' },
        kind: { type: 'string' },
        'no-http-run': { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const help = values.help === true;
  if (positionals.length > 1)
    throw new UsageError(`one scenario at a time, got ${positionals.join(' ')}`);
  const target = positionals[0];
  if (!target) {
    if (help)
      return {
        help,
        target: 'all',
        scenarios: [],
        optionsFor: () => {
          throw new UsageError('no scenario');
        },
      };
    throw new UsageError(`name a scenario: ${SCENARIOS.join(', ')} or all`);
  }
  if (target !== 'all' && !(SCENARIOS as readonly string[]).includes(target)) {
    throw new UsageError(`unknown scenario "${target}"; scenarios: ${SCENARIOS.join(', ')}, all`);
  }

  // Everything given on the command line, checked once, whatever the scenario.
  const given: Partial<Tunable> = {};
  const v = values;
  if (v.topology !== undefined) {
    if (v.topology !== 'standalone' && v.topology !== 'split')
      throw new UsageError(`--topology must be standalone or split, got "${v.topology}"`);
    given.topology = v.topology;
  }
  if (v['log-level'] !== undefined) {
    if (!['error', 'warn', 'info', 'debug'].includes(v['log-level']))
      throw new UsageError(`--log-level must be error, warn, info or debug`);
    given.logLevel = v['log-level'] as Tunable['logLevel'];
  }
  if (v['max-seconds'] !== undefined)
    given.maxSeconds = number('max-seconds', v['max-seconds'], 10, 3600);
  if (v['drain-timeout'] !== undefined)
    given.drainTimeoutSeconds = number('drain-timeout', v['drain-timeout'], 1, 3600);
  if (v.duration !== undefined)
    given.durationSeconds = number('duration', v.duration, 0.5, 3600, false);
  if (v.rate !== undefined) given.rate = number('rate', v.rate, 0.01, 1_000_000, false);
  if (v.endpoints !== undefined) given.endpoints = number('endpoints', v.endpoints, 0, 100_000);
  if (v['max-in-flight'] !== undefined)
    given.maxInFlight = number('max-in-flight', v['max-in-flight'], 1, 4096);
  if (v['payload-bytes'] !== undefined)
    given.payloadBytes = number('payload-bytes', v['payload-bytes'], 0, 200_000);
  if (v['receiver-latency'] !== undefined)
    given.receiverLatencyMs = number('receiver-latency', v['receiver-latency'], 0, 60_000);
  if (v['fail-rate'] !== undefined)
    given.failRate = number('fail-rate', v['fail-rate'], 0, 1, false);
  if (v['fail-status'] !== undefined) {
    try {
      given.failWith = parseFailWith(v['fail-status']);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  if (v.steps !== undefined) given.steps = numberList('steps', v.steps, 1, 4096);
  if (v['batch-sizes'] !== undefined)
    given.batchSizes = numberList('batch-sizes', v['batch-sizes'], 1, 100_000);
  if (v['batch-steps'] !== undefined)
    given.batchSteps = numberList('batch-steps', v['batch-steps'], 1, 4096);
  if (v.organizations !== undefined)
    given.organizations = number('organizations', v.organizations, 1, 1000);
  if (v['step-seconds'] !== undefined)
    given.stepSeconds = number('step-seconds', v['step-seconds'], 0.5, 600, false);
  if (v.events !== undefined) given.events = number('events', v.events, 1, 10_000_000);
  if (v['events-per-endpoint'] !== undefined)
    given.eventsPerEndpoint = number('events-per-endpoint', v['events-per-endpoint'], 1, 1_000_000);
  if (v.healthy !== undefined) given.healthy = number('healthy', v.healthy, 1, 100);
  if (v['neighbour-rate'] !== undefined)
    given.neighbourRate = number('neighbour-rate', v['neighbour-rate'], 0, 100_000, false);
  if (v['neighbour-latency'] !== undefined)
    given.neighbourLatencyMs = number('neighbour-latency', v['neighbour-latency'], 0, 60_000);
  if (v['neighbour-backlog'] !== undefined)
    given.neighbourBacklog = number('neighbour-backlog', v['neighbour-backlog'], 0, 1_000_000);
  if (v.rounds !== undefined) given.rounds = number('rounds', v.rounds, 1, 10);
  if (v.fifo) given.fifo = true;
  if (v['non-fifo']) given.nonFifo = true;
  if (v.records !== undefined) given.records = number('records', v.records, 1, 100_000_000);
  if (v['message-bytes'] !== undefined)
    given.messageBytes = number('message-bytes', v['message-bytes'], 1, 900_000);
  if (v.partitions !== undefined) given.partitions = number('partitions', v.partitions, 1, 1000);
  if (v.batch !== undefined) given.batch = number('batch', v.batch, 1, 100_000);
  if (v.kind !== undefined) {
    if (!(E2E_KINDS as readonly string[]).includes(v.kind))
      throw new UsageError(`--kind must be ${E2E_KINDS.join(', ')}, got "${v.kind}"`);
    if (target !== 'e2e') throw new UsageError('--kind goes with the e2e scenario');
    given.kind = v.kind as E2eKind;
  }
  if (v['no-http-run']) given.httpBeside = false;
  if (given.fifo && given.nonFifo)
    throw new UsageError('--fifo and --non-fifo contradict each other');
  if (v.tenants) {
    if (target !== 'isolation') throw new UsageError('--tenants goes with the isolation scenario');
    if (given.fifo) throw new UsageError('--tenants runs plain endpoints, not --fifo');
    given.tenants = true;
  }
  if (v.neighbours !== undefined) {
    if (!v.tenants) throw new UsageError('--neighbours goes with isolation --tenants');
    given.neighbours = number('neighbours', v.neighbours, 1, 1000);
  }

  const stackEnv: Record<string, string> = {};
  for (const pair of v['stack-env'] ?? []) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!match) throw new UsageError(`--stack-env takes KEY=VALUE, got "${pair}"`);
    stackEnv[match[1]] = match[2];
  }

  let attach: BenchOptions['attach'];
  if (v.url !== undefined || v['admin-token'] !== undefined) {
    if (!v.url || !v['admin-token'])
      throw new UsageError('--url and --admin-token go together (a running Hookbase)');
    const url = v.url.replace(/\/+$/, '');
    if (!/^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(url)) {
      throw new UsageError(
        `--url must be a loopback address (load stays on this machine), got "${v.url}"`,
      );
    }
    attach = {
      url,
      adminToken: v['admin-token'],
      topicPrefix: v['topic-prefix'] ?? 'hookbase',
      pid: v.pid === undefined ? undefined : number('pid', v.pid, 1, 2 ** 22),
    };
  }

  if (v['grpc-address'] !== undefined) {
    if (!attach) throw new UsageError('--grpc-address goes with --url (a running Hookbase)');
    if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\]):\d+$/.test(v['grpc-address'])) {
      throw new UsageError(
        `--grpc-address must be a loopback host:port (load stays on this machine), got "${v['grpc-address']}"`,
      );
    }
    given.grpcAddress = v['grpc-address'];
  }

  const brokers = v.brokers ?? env.HOOKBASE_BENCH_KAFKA_BROKERS ?? env.KAFKA_BROKERS ?? '';
  const databaseUrl =
    v['database-url'] ?? env.HOOKBASE_BENCH_DATABASE_URL ?? env.DATABASE_URL ?? '';
  const scenarios = target === 'all' ? [...SCENARIOS] : [target as ScenarioName];
  return {
    help,
    target: target as ScenarioName | 'all',
    scenarios,
    optionsFor(scenario) {
      if (!brokers)
        throw new UsageError('no Kafka brokers: run through `npm run bench` or pass --brokers');
      if (!databaseUrl && !attach && scenario !== 'kafka-client') {
        throw new UsageError('no PostgreSQL: run through `npm run bench` or pass --database-url');
      }
      return {
        ...COMMON,
        ...SCENARIO_DEFAULTS[scenario],
        // isolation runs FIFO lanes unless --non-fifo. A FIFO lane carries one message at a time:
        // its healthy lanes are loaded below what they carry on this machine, so the comparison
        // is of lanes that keep up.
        ...(scenario === 'isolation' && !given.nonFifo && !given.tenants
          ? { fifo: true, rate: ISOLATION_FIFO_RATE }
          : {}),
        ...(scenario === 'isolation' && given.tenants ? ISOLATION_TENANT_DEFAULTS : {}),
        ...(scenario === 'e2e' && given.kind !== undefined && given.kind !== 'http'
          ? { endpoints: CLOUD_E2E_ENDPOINTS }
          : {}),
        ...given,
        scenario,
        brokers,
        databaseUrl,
        attach,
        stackEnv: {
          ...(scenario === 'isolation' && given.tenants ? ISOLATION_TENANT_STACK_ENV : {}),
          ...stackEnv,
        },
        resultsDir: v['results-dir'] ?? 'bench/results',
      };
    },
  };
}
