import { parseArgs } from 'node:util';
import { parseFailWith } from './behaviour';

/** The scenarios, in the order `all` runs them. */
export const SCENARIOS = [
  'ingest-rest',
  'ingest-batch',
  'ingest-grpc',
  'ingest-kafka',
  'e2e',
  'fifo-rtt',
  'fifo-many',
  'isolation',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Endpoint kinds the e2e scenario can deliver to: the bench's receiver, or moto. */
export const E2E_KINDS = ['http', 'sqs', 's3'] as const;
export type E2eKind = (typeof E2E_KINDS)[number];

export class UsageError extends Error {}

/**
 * Everything a scenario reads, resolved: the common defaults, then the scenario's, then what the
 * command line gave for the flags the scenario declares. Each field is read by the scenarios that
 * declare its flag (see each scenario's `options`).
 */
export interface BenchOptions extends Tunable {
  scenario: ScenarioName;
  brokers: string;
  databaseUrl: string;
  /** Drive a Hookbase that is already running instead of starting one. */
  attach:
    { url: string; adminToken: string; topicPrefix: string; pid: number | undefined } | undefined;
  stackEnv: Record<string, string>;
  /**
   * Traces on in the started services (`--tracing on`): exported over OTLP/HTTP to a sink on
   * loopback that discards them. Off by default, as in an installation without a collector.
   */
  tracing: boolean;
  resultsDir: string;
}

/**
 * The options a flag sets, at their defaults when neither the scenario nor the command line sets
 * them (each scenario's `options` lists the flags it reads; its type is these values').
 */
const DEFAULTS = {
  topology: 'standalone' as 'standalone' | 'split',
  logLevel: 'warn' as 'error' | 'warn' | 'info' | 'debug',
  /** Hard bound on the whole scenario, setup and teardown included. */
  maxSeconds: 175,
  drainTimeoutSeconds: 60,
  durationSeconds: 10,
  rate: 100,
  endpoints: 1,
  maxInFlight: 64,
  payloadBytes: 256,
  receiverLatencyMs: 0,
  failRate: 0,
  failWith: 503 as number | 'drop',
  steps: [1, 8, 32, 128],
  stepSeconds: 4,
  /** Events per request of the batch calls (ingest-batch, ingest-grpc's PublishBatch). */
  batchSizes: [100, 500],
  /** Requests in flight, one step each, for the batch calls. */
  batchSteps: [1, 4, 16],
  /** A running Hookbase's gRPC ingest, host:port (with --url; a started stack picks its own). */
  grpcAddress: undefined as string | undefined,
  /** ingest-kafka: organizations the direct producer writes for, spread over the partitions. */
  organizations: 6,
  events: 300,
  eventsPerEndpoint: 10,
  healthy: 8,
  neighbourRate: 50,
  neighbourLatencyMs: 0,
  /** isolation: messages queued behind the FIFO neighbour's head before run 2 (null: 50,000). */
  neighbourBacklog: null as number | null,
  /** isolation: rounds of a run without the neighbour's load, then one with it. */
  rounds: 3,
  fifo: false,
  nonFifo: false,
  /** isolation --tenants: the neighbour is another organization's `neighbours` endpoints. */
  tenants: false,
  neighbours: 1,
  /** The raw Kafka produce bound's records, and records per send (also ingest-kafka's). */
  records: 100_000,
  batch: 500,
  /** e2e: the endpoints' kind (http to the bench's receiver, or sqs / s3 in moto). */
  kind: 'http' as E2eKind,
  /** e2e with a cloud kind: also run http endpoints at the same settings, in the same stack. */
  httpBeside: true,
  /** ingest-rest: the organization's policy `validated`, the bench type's schema of 32 properties. */
  validatedSchema: false,
  /** e2e: every endpoint with two channels and a filter, every event on one of those channels. */
  routing: false,
};
export type Tunable = typeof DEFAULTS;

type Parsed = Partial<Tunable>;

/** A flag: the text of its help line, and what it sets. */
interface Flag {
  arg?: string;
  help: string;
  /** A boolean flag sets these; a flag with an argument parses it into `key`. */
  sets?: Parsed;
  key?: keyof Tunable;
  parse?: (value: string, flag: string) => Tunable[keyof Tunable];
}

function number(flag: string, value: string, min: number, max: number, integer = true): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < min || parsed > max) fail();
  if (integer && !Number.isInteger(parsed)) fail();
  return parsed;
  function fail(): never {
    throw new UsageError(
      `--${flag} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got "${value}"`,
    );
  }
}

type Parse = NonNullable<Flag['parse']>;
const valued = (key: keyof Tunable, arg: string, help: string, parse: Parse): Flag => ({
  key,
  arg,
  help,
  parse,
});
const int = (key: keyof Tunable, arg: string, min: number, max: number, help: string) =>
  valued(key, arg, help, (value, flag) => number(flag, value, min, max));
const real = (key: keyof Tunable, arg: string, min: number, max: number, help: string) =>
  valued(key, arg, help, (value, flag) => number(flag, value, min, max, false));
/** A comma-separated list of integers, each within [min, max]. */
const list = (key: keyof Tunable, min: number, max: number, help: string) =>
  valued(key, 'LIST', help, (value, flag) =>
    value.split(',').map((item) => number(flag, item.trim(), min, max)),
  );
const oneOf = (key: keyof Tunable, values: readonly string[], says: string, help: string) =>
  valued(key, values.join('|'), help, (value, flag) => {
    if (!values.includes(value)) throw new UsageError(`--${flag} must be ${says}, got "${value}"`);
    return value;
  });
const LOOPBACK = '(127\\.\\d+\\.\\d+\\.\\d+|localhost|\\[::1\\])';

/** Every flag that sets an option, once. A scenario lists the ones it reads. */
const FLAGS = {
  topology: oneOf(
    'topology',
    ['standalone', 'split'],
    'standalone or split',
    'one process (as npm start) or one per service',
  ),
  'log-level': valued('logLevel', 'L', "services' LOG_LEVEL", (value, flag) => {
    const levels = ['error', 'warn', 'info', 'debug'];
    if (!levels.includes(value))
      throw new UsageError(`--${flag} must be error, warn, info or debug, got "${value}"`);
    return value;
  }),
  'max-seconds': int('maxSeconds', 'S', 10, 3600, 'hard bound on the scenario'),
  'drain-timeout': int(
    'drainTimeoutSeconds',
    'S',
    1,
    3600,
    'wait at most S s for deliveries after the load',
  ),
  'payload-bytes': int('payloadBytes', 'N', 0, 200_000, 'event payload size'),
  duration: real('durationSeconds', 'S', 0.5, 3600, 'seconds of open-loop load'),
  rate: real('rate', 'N', 0.01, 1_000_000, 'events/s of open-loop load'),
  endpoints: int('endpoints', 'N', 0, 100_000, 'endpoints to create'),
  'max-in-flight': int('maxInFlight', 'N', 1, 4096, 'publishes in flight at most'),
  'receiver-latency': int(
    'receiverLatencyMs',
    'MS',
    0,
    60_000,
    'the receiver answers after MS milliseconds',
  ),
  'fail-rate': real(
    'failRate',
    'F',
    0,
    1,
    'fail this share of first attempts (later attempts succeed)',
  ),
  'fail-status': valued(
    'failWith',
    'S|drop',
    'fail with this status, or drop the connection',
    (value) => {
      try {
        return parseFailWith(value);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
    },
  ),
  steps: list('steps', 1, 4096, 'requests in flight, one step each'),
  'step-seconds': real('stepSeconds', 'S', 0.5, 600, 'seconds a step'),
  'batch-sizes': list('batchSizes', 1, 100_000, 'events per batch request'),
  'batch-steps': list('batchSteps', 1, 4096, 'batch requests in flight, one step each'),
  'grpc-address': valued(
    'grpcAddress',
    'HOST:PORT',
    "a running Hookbase's gRPC ingest (with --url)",
    (value) => {
      if (!new RegExp(`^${LOOPBACK}:\\d+$`).test(value))
        throw new UsageError(
          `--grpc-address must be a loopback host:port (load stays on this machine), got "${value}"`,
        );
      return value;
    },
  ),
  records: int('records', 'N', 1, 100_000_000, 'records of the raw Kafka produce bound'),
  batch: int('batch', 'N', 1, 100_000, 'records per Kafka send'),
  organizations: int('organizations', 'N', 1, 1000, 'organizations, spread over the partitions'),
  events: int('events', 'N', 1, 10_000_000, 'events to publish'),
  'events-per-endpoint': int('eventsPerEndpoint', 'N', 1, 1_000_000, 'events to each endpoint'),
  healthy: int('healthy', 'N', 1, 100, 'healthy endpoints'),
  'neighbour-rate': real('neighbourRate', 'N', 0, 100_000, 'events/s to each neighbour endpoint'),
  'neighbour-latency': int(
    'neighbourLatencyMs',
    'MS',
    0,
    60_000,
    'the neighbour answers after MS milliseconds',
  ),
  'neighbour-backlog': int(
    'neighbourBacklog',
    'N',
    0,
    1_000_000,
    "messages queued behind the FIFO neighbour's head (50000)",
  ),
  rounds: int('rounds', 'N', 1, 10, 'rounds alone then beside'),
  fifo: { help: 'FIFO endpoints', sets: { fifo: true } },
  'non-fifo': { help: 'plain endpoints', sets: { nonFifo: true } },
  tenants: {
    help: "the neighbour is another organization's endpoints that never answer",
    sets: { tenants: true },
  },
  neighbours: int('neighbours', 'N', 1, 1000, "the neighbour organization's endpoints (--tenants)"),
  kind: oneOf(
    'kind',
    E2E_KINDS,
    E2E_KINDS.join(', '),
    "the endpoints' kind; sqs and s3 in moto (started if needed)",
  ),
  'no-http-run': {
    help: 'with --kind sqs|s3: skip the http run at the same settings',
    sets: { httpBeside: false },
  },
  'validated-schema': {
    help: "the organization's event type policy `validated`, the bench type declared with a schema of 32 properties",
    sets: { validatedSchema: true },
  },
  routing: {
    help: 'every endpoint listens on two channels and has a filter; every event is on one of them',
    sets: { routing: true },
  },
} satisfies Record<string, Flag>;
export type FlagName = keyof typeof FLAGS;

/** The flags every scenario takes; each scenario declares the rest. */
const COMMON_FLAGS: readonly FlagName[] = [
  'topology',
  'log-level',
  'max-seconds',
  'drain-timeout',
  'payload-bytes',
];

/** What a scenario declares about its options. */
export interface ScenarioOptions {
  name: ScenarioName;
  /** What it measures, for the usage text. */
  summary: string;
  /** The flags it reads beyond the common ones. */
  flags: readonly FlagName[];
  /** Its defaults, over the common ones. */
  defaults: Parsed;
  /**
   * The defaults that follow from what was given (a variant's), and the stack environment the
   * variant needs; throws a UsageError when given flags contradict each other.
   */
  refine?(
    given: Parsed,
    attached: boolean,
  ): { defaults?: Parsed; stackEnv?: Record<string, string> };
}

export interface CommandLine {
  help: boolean;
  target: ScenarioName | 'all';
  scenarios: ScenarioName[];
  /** The usage text: the scenario's with --help after a scenario, else the general one. */
  usage: string;
  optionsFor(scenario: ScenarioName): BenchOptions;
}

const STACK_USAGE = `options of every scenario
  --url URL --admin-token T     drive a running Hookbase instead of starting one
  --topic-prefix P              its topic prefix (hookbase)   --pid N   its process, for RSS
  --stack-env KEY=VALUE         extra environment for started services (repeatable)
  --metrics on|off              Prometheus metrics in the started services (on; off: HOOKBASE_METRICS=false)
  --tracing on|off              OpenTelemetry traces from the started services to a discarding
                                OTLP sink on loopback (off)
  --brokers B --database-url U  infrastructure (default: what scripts/bench.mjs ensured)
  --results-dir DIR             where the JSON results go (bench/results)`;

function flagLine(flag: FlagName, defaults: Tunable): string {
  const { arg, help, key } = FLAGS[flag] as Flag;
  const value = key === undefined ? undefined : defaults[key];
  const shown =
    value === undefined || value === null
      ? ''
      : ` (${Array.isArray(value) ? value.join(',') : String(value)})`;
  return `  ${`--${flag}${arg ? ` ${arg}` : ''}`.padEnd(30)}${help}${shown}`;
}

/** The general usage: the scenarios, the options they all take. */
export function usage(scenarios: readonly ScenarioOptions[]): string {
  return [
    'usage: npm run bench -- <scenario|all> [options]   (npm run bench -- <scenario> --help: its options)',
    '',
    'scenarios',
    ...scenarios.map(
      (s) => `  ${s.name.padEnd(14)}${s.summary.replace(/\n/g, `\n${' '.repeat(16)}`)}`,
    ),
    `  ${'all'.padEnd(14)}every scenario in turn (one that cannot run here is reported as not run)`,
    '',
    STACK_USAGE,
    ...COMMON_FLAGS.map((flag) => flagLine(flag, DEFAULTS)),
  ].join('\n');
}

/** One scenario's usage: what it measures and its own flags, with its defaults. */
export function scenarioUsage(scenario: ScenarioOptions): string {
  // The defaults of a run without flags: the scenario's default variant included.
  const variant = scenario.refine?.({}, false).defaults;
  const defaults = { ...DEFAULTS, ...scenario.defaults, ...variant };
  return [
    `usage: npm run bench -- ${scenario.name} [options]`,
    `  ${scenario.summary.replace(/\n/g, '\n  ')}`,
    '',
    `options of ${scenario.name} (default)`,
    ...scenario.flags.map((flag) => flagLine(flag, defaults)),
    ...COMMON_FLAGS.map((flag) => flagLine(flag, defaults)),
    '',
    STACK_USAGE,
  ].join('\n');
}

function parseAttach(values: Record<string, string | boolean | string[] | undefined>) {
  const url = values.url as string | undefined;
  const adminToken = values['admin-token'] as string | undefined;
  if (url === undefined && adminToken === undefined) return undefined;
  if (!url || !adminToken)
    throw new UsageError('--url and --admin-token go together (a running Hookbase)');
  const base = url.replace(/\/+$/, '');
  if (!new RegExp(`^http://${LOOPBACK}(:\\d+)?$`).test(base))
    throw new UsageError(
      `--url must be a loopback address (load stays on this machine), got "${url}"`,
    );
  const pid = values.pid as string | undefined;
  return {
    url: base,
    adminToken,
    topicPrefix: (values['topic-prefix'] as string | undefined) ?? 'hookbase',
    pid: pid === undefined ? undefined : number('pid', pid, 1, 2 ** 22),
  };
}

function onOff(flag: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off')
    throw new UsageError(`--${flag} must be on or off, got "${value}"`);
  return value === 'on';
}

function parseStackEnv(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!match) throw new UsageError(`--stack-env takes KEY=VALUE, got "${pair}"`);
    env[match[1]] = match[2];
  }
  return env;
}

/**
 * Reads the command line against the scenarios' declarations: a flag is taken when the scenario
 * (or, for `all`, any scenario) declares it, and each scenario gets only the flags it declares.
 */
export function parseCommandLine(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  scenarios: readonly ScenarioOptions[],
): CommandLine {
  const flagOptions = Object.fromEntries(
    Object.entries(FLAGS).map(([flag, spec]) => [
      flag,
      { type: 'parse' in spec ? ('string' as const) : ('boolean' as const) },
    ]),
  );
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        ...flagOptions,
        help: { type: 'boolean', short: 'h' },
        url: { type: 'string' },
        'admin-token': { type: 'string' },
        'topic-prefix': { type: 'string' },
        pid: { type: 'string' },
        'stack-env': { type: 'string', multiple: true },
        metrics: { type: 'string' },
        tracing: { type: 'string' },
        brokers: { type: 'string' },
        'database-url': { type: 'string' },
        'results-dir': { type: 'string' },
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
  const names = scenarios.map((s) => s.name);
  const general = usage(scenarios);
  if (!target) {
    if (!help) throw new UsageError(`name a scenario: ${names.join(', ')} or all`);
    const none = () => {
      throw new UsageError('no scenario');
    };
    return { help, target: 'all', scenarios: [], usage: general, optionsFor: none };
  }
  const chosen = target === 'all' ? scenarios : scenarios.filter((s) => s.name === target);
  if (chosen.length === 0)
    throw new UsageError(`unknown scenario "${target}"; scenarios: ${names.join(', ')}, all`);

  // Each flag given, checked once: it must belong to a chosen scenario.
  const given = new Map<FlagName, Parsed>();
  for (const [flag, value] of Object.entries(values)) {
    if (!(flag in FLAGS) || value === undefined) continue;
    const name = flag as FlagName;
    const owners = scenarios.filter((s) => s.flags.includes(name)).map((s) => s.name);
    if (!COMMON_FLAGS.includes(name) && !chosen.some((s) => s.flags.includes(name)))
      throw new UsageError(
        `--${name} goes with the ${owners.join(', ')} scenario${owners.length > 1 ? 's' : ''}`,
      );
    const spec = FLAGS[name] as Flag;
    if (spec.sets) {
      if (value === true) given.set(name, spec.sets);
    } else given.set(name, { [spec.key!]: spec.parse!(value as string, name) });
  }
  const attach = parseAttach(values);
  const stackEnv = parseStackEnv(values['stack-env'] ?? []);
  const metrics = onOff('metrics', values.metrics);
  const tracing = onOff('tracing', values.tracing) ?? false;
  if (attach && (metrics !== undefined || tracing))
    throw new UsageError(
      '--metrics and --tracing set up a started stack, not a running one (--url)',
    );
  if (metrics !== undefined) stackEnv.HOOKBASE_METRICS = String(metrics);
  const brokers = values.brokers ?? env.HOOKBASE_BENCH_KAFKA_BROKERS ?? env.KAFKA_BROKERS ?? '';
  const databaseUrl =
    values['database-url'] ?? env.HOOKBASE_BENCH_DATABASE_URL ?? env.DATABASE_URL ?? '';
  const resolve = (scenario: ScenarioOptions): BenchOptions => {
    const own: Parsed = {};
    for (const flag of [...COMMON_FLAGS, ...scenario.flags]) Object.assign(own, given.get(flag));
    const refined = scenario.refine?.(own, attach !== undefined) ?? {};
    return {
      ...DEFAULTS,
      ...scenario.defaults,
      ...refined.defaults,
      ...own,
      scenario: scenario.name,
      brokers,
      databaseUrl,
      attach,
      stackEnv: { ...refined.stackEnv, ...stackEnv },
      tracing,
      resultsDir: values['results-dir'] ?? 'bench/results',
    };
  };
  // Contradictions show now, before anything starts.
  const resolved = new Map(chosen.map((s) => [s.name, resolve(s)]));
  return {
    help,
    target: target as ScenarioName | 'all',
    scenarios: chosen.map((s) => s.name),
    usage: target === 'all' ? general : scenarioUsage(chosen[0]),
    optionsFor(scenario) {
      if (!brokers)
        throw new UsageError('no Kafka brokers: run through `npm run bench` or pass --brokers');
      if (!databaseUrl && !attach)
        throw new UsageError('no PostgreSQL: run through `npm run bench` or pass --database-url');
      const options = resolved.get(scenario);
      if (!options) throw new UsageError(`${scenario} was not chosen`);
      return options;
    },
  };
}
