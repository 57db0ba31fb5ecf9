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

export class UsageError extends Error {}

/** The options a flag sets; a scenario reads the ones it declares, at its defaults. */
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
  batchSizes: [100, 500],
  batchSteps: [1, 4, 16],
  organizations: 6,
  /** e2e: applications of the one organization, the endpoints spread over them (0: none). */
  applications: 0,
  events: 300,
  eventsPerEndpoint: 10,
  healthy: 8,
  neighbourRate: 50,
  neighbourLatencyMs: 0,
  /** isolation: messages queued behind the FIFO neighbour's head before the last run. */
  neighbourBacklog: null as number | null,
  rounds: 3,
  /** isolation: FIFO endpoints (unless --non-fifo or --tenants). */
  fifo: false,
  nonFifo: false,
  /** ingest-rest: the organization's policy `validated`, the bench type's schema of 32 properties. */
  validatedSchema: false,
  /** e2e: every endpoint with two channels and a filter, every event on one of those channels. */
  routing: false,
  tenants: false,
  neighbours: 1,
  /** The raw Kafka produce bound's records, and records per send (also ingest-kafka's). */
  records: 100_000,
  batch: 500,
};
export type Tunable = typeof DEFAULTS;
type Parsed = Partial<Tunable>;

/** Everything a scenario reads, resolved: defaults, the scenario's, then the command line's. */
export interface BenchOptions extends Tunable {
  scenario: ScenarioName;
  brokers: string;
  databaseUrl: string;
  stackEnv: Record<string, string>;
  /** Each started service inside a memory cgroup of this many MiB (a container's limit), or null. */
  memoryLimitMiB: number | null;
  resultsDir: string;
}

/** A flag: its help line and what it sets (a flag without `arg` is a switch). */
interface Flag {
  arg?: string;
  help: string;
  key: keyof Tunable;
  parse(value: string, flag: string): Tunable[keyof Tunable];
}

function number(flag: string, value: string, min: number, max: number, integer = true): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n)))
    throw new UsageError(
      `--${flag} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got "${value}"`,
    );
  return n;
}

type K = keyof Tunable;
const flag = (key: K, arg: string | undefined, help: string, parse: Flag['parse']): Flag => {
  return { key, arg, help, parse };
};
const int = (key: K, arg: string, min: number, max: number, help: string) =>
  flag(key, arg, help, (v, f) => number(f, v, min, max));
const real = (key: K, arg: string, min: number, max: number, help: string) =>
  flag(key, arg, help, (v, f) => number(f, v, min, max, false));
const list = (key: K, min: number, max: number, help: string) =>
  flag(key, 'LIST', help, (v, f) => v.split(',').map((item) => number(f, item.trim(), min, max)));
const oneOf = (key: K, values: readonly string[], help: string, arg: string) =>
  flag(key, arg, help, (v, f) => {
    if (!values.includes(v))
      throw new UsageError(`--${f} must be one of ${values.join(', ')}, got "${v}"`);
    return v as Tunable[K];
  });
const on = (key: K, help: string, value = true) => flag(key, undefined, help, () => value);

/** Every flag that sets an option, once. A scenario lists the ones it reads. */
const FLAGS = {
  topology: oneOf('topology', ['standalone', 'split'], 'split: a process per service', 'T'),
  'log-level': oneOf('logLevel', ['error', 'warn', 'info', 'debug'], "services' LOG_LEVEL", 'L'),
  'max-seconds': int('maxSeconds', 'S', 10, 3600, 'hard bound on the scenario'),
  'drain-timeout': int('drainTimeoutSeconds', 'S', 1, 3600, 'drain deliveries for S s at most'),
  'payload-bytes': int('payloadBytes', 'N', 0, 200_000, 'event payload size'),
  duration: real('durationSeconds', 'S', 0.5, 3600, 'seconds of open-loop load'),
  rate: real('rate', 'N', 0.01, 1_000_000, 'events/s of open-loop load'),
  endpoints: int('endpoints', 'N', 0, 100_000, 'endpoints to create'),
  'max-in-flight': int('maxInFlight', 'N', 1, 4096, 'publishes in flight at most'),
  'receiver-latency': int('receiverLatencyMs', 'MS', 0, 60_000, 'the receiver answers after MS'),
  'fail-rate': real('failRate', 'F', 0, 1, 'fail this share of first attempts (not retries)'),
  'fail-status': flag('failWith', 'S|drop', 'fail with this status, or drop the connection', (v) =>
    parseFailWith(v, UsageError),
  ),
  steps: list('steps', 1, 4096, 'requests in flight, one step each'),
  'step-seconds': real('stepSeconds', 'S', 0.5, 600, 'seconds a step'),
  'batch-sizes': list('batchSizes', 1, 100_000, 'events per batch request'),
  'batch-steps': list('batchSteps', 1, 4096, 'batch requests in flight, one step each'),
  records: int('records', 'N', 1, 100_000_000, 'records of the raw Kafka produce bound'),
  batch: int('batch', 'N', 1, 100_000, 'records per Kafka send'),
  organizations: int(
    'organizations',
    'N',
    1,
    1000,
    'organizations (ingest-kafka: one a partition; e2e: endpoints split over them, a key each)',
  ),
  applications: int('applications', 'N', 1, 10_000, 'applications, endpoints split over them'),
  events: int('events', 'N', 1, 10_000_000, 'events to publish'),
  'events-per-endpoint': int('eventsPerEndpoint', 'N', 1, 1_000_000, 'events to each endpoint'),
  healthy: int('healthy', 'N', 1, 100, 'healthy endpoints'),
  'neighbour-rate': real('neighbourRate', 'N', 0, 100_000, 'events/s to each neighbour endpoint'),
  'neighbour-latency': int('neighbourLatencyMs', 'MS', 0, 60_000, 'the neighbour answers after MS'),
  'neighbour-backlog': int('neighbourBacklog', 'N', 0, 1e6, 'queued behind the neighbour (50000)'),
  rounds: int('rounds', 'N', 1, 10, 'rounds alone then beside'),
  'non-fifo': on('nonFifo', 'plain endpoints instead of FIFO lanes'),
  'validated-schema': on(
    'validatedSchema',
    "the organization's event type policy `validated`, the bench type with a schema of 32 properties",
  ),
  routing: on('routing', 'every endpoint has two channels and a filter that every event passes'),
  tenants: on('tenants', "the neighbour is another organization's endpoints that never answer"),
  neighbours: int('neighbours', 'N', 1, 1000, "the neighbour organization's endpoints (--tenants)"),
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

/** What a scenario declares about its options: its flags, its defaults, its variants. */
export interface ScenarioOptions {
  name: ScenarioName;
  /** What it measures, for the usage text. */
  summary: string;
  flags: readonly FlagName[];
  defaults: Parsed;
  /** The defaults and stack environment of the variant given; throws on contradictions. */
  refine?(given: Parsed): { defaults?: Parsed; stackEnv?: Record<string, string> };
}

export interface CommandLine {
  help: boolean;
  target: ScenarioName | 'all';
  scenarios: ScenarioName[];
  usage: string;
  optionsFor(scenario: ScenarioName): BenchOptions;
}

const STACK_USAGE = `options of every scenario
  --stack-env KEY=VALUE         extra environment for the started services (repeatable)
  --memory-limit MIB            each started service inside a memory cgroup of MIB, as a
                                container's memory limit (needs root and a cgroup memory controller)
  --brokers B --database-url U  infrastructure (default: what scripts/bench.mjs ensured)
  --results-dir DIR             where the JSON results go (bench/results)`;

function flagLine(name: FlagName, defaults: Tunable): string {
  const { arg, help, key } = FLAGS[name] as Flag;
  const value = arg ? defaults[key] : undefined;
  const shown = value === undefined || value === null ? '' : ` (${String(value)})`;
  return `  ${`--${name}${arg ? ` ${arg}` : ''}`.padEnd(30)}${help}${shown}`;
}

/** The general usage, or (with a scenario) its own flags with its defaults. */
export function usage(scenarios: readonly ScenarioOptions[], one?: ScenarioOptions): string {
  if (!one)
    return [
      'usage: npm run bench -- <scenario|all> [options]   (npm run bench -- <scenario> --help: its options)',
      '\nscenarios',
      ...scenarios.map(
        (s) => `  ${s.name.padEnd(14)}${s.summary.replace(/\n/g, `\n${' '.repeat(16)}`)}`,
      ),
      `  ${'all'.padEnd(14)}every scenario in turn`,
      '',
      STACK_USAGE,
      ...COMMON_FLAGS.map((name) => flagLine(name, DEFAULTS)),
    ].join('\n');
  const defaults = { ...DEFAULTS, ...one.defaults, ...one.refine?.({}).defaults };
  return [
    `usage: npm run bench -- ${one.name} [options]`,
    `  ${one.summary.replace(/\n/g, '\n  ')}`,
    `\noptions of ${one.name} (default)`,
    ...[...one.flags, ...COMMON_FLAGS].map((name) => flagLine(name, defaults)),
    '',
    STACK_USAGE,
  ].join('\n');
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
 * Reads the command line against the scenarios' declarations: a flag is taken when a chosen
 * scenario declares it, and each scenario gets only the flags it declares.
 */
export function parseCommandLine(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  scenarios: readonly ScenarioOptions[],
): CommandLine {
  const text = { type: 'string' as const };
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        ...Object.fromEntries(
          Object.entries(FLAGS).map(([name, f]) => [
            name,
            { type: f.arg ? 'string' : 'boolean' } as const,
          ]),
        ),
        help: { type: 'boolean', short: 'h' },
        'stack-env': { type: 'string', multiple: true },
        'memory-limit': text,
        brokers: text,
        'database-url': text,
        'results-dir': text,
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const help = values.help === true;
  const names = scenarios.map((s) => s.name);
  if (positionals.length > 1)
    throw new UsageError(`one scenario at a time, got ${positionals.join(' ')}`);
  const target = positionals[0];
  if (!target) {
    if (!help) throw new UsageError(`name a scenario: ${names.join(', ')} or all`);
    const none = () => {
      throw new UsageError('no scenario');
    };
    return { help, target: 'all', scenarios: [], usage: usage(scenarios), optionsFor: none };
  }
  const chosen = target === 'all' ? scenarios : scenarios.filter((s) => s.name === target);
  if (chosen.length === 0)
    throw new UsageError(`unknown scenario "${target}"; scenarios: ${names.join(', ')}, all`);

  const given = new Map<FlagName, Parsed>();
  for (const [name, value] of Object.entries(values)) {
    if (!(name in FLAGS) || value === undefined || value === false) continue;
    const f = FLAGS[name as FlagName] as Flag;
    const owners = scenarios.filter((s) => s.flags.includes(name as FlagName)).map((s) => s.name);
    if (
      !COMMON_FLAGS.includes(name as FlagName) &&
      !chosen.some((s) => s.flags.includes(name as FlagName))
    )
      throw new UsageError(
        `--${name} goes with the ${owners.join(', ')} scenario${owners.length > 1 ? 's' : ''}`,
      );
    given.set(name as FlagName, { [f.key]: f.parse(value as string, name) });
  }
  const stackEnv = parseStackEnv(values['stack-env'] ?? []);
  const limit = values['memory-limit'];
  const memoryLimitMiB = limit === undefined ? null : number('memory-limit', limit, 64, 1_048_576);
  const brokers = values.brokers ?? env.HOOKBASE_BENCH_KAFKA_BROKERS ?? env.KAFKA_BROKERS ?? '';
  const databaseUrl =
    values['database-url'] ?? env.HOOKBASE_BENCH_DATABASE_URL ?? env.DATABASE_URL ?? '';
  const resolve = (scenario: ScenarioOptions): BenchOptions => {
    const own: Parsed = {};
    for (const name of [...COMMON_FLAGS, ...scenario.flags]) Object.assign(own, given.get(name));
    const refined = scenario.refine?.(own) ?? {};
    return {
      ...DEFAULTS,
      ...scenario.defaults,
      ...refined.defaults,
      ...own,
      scenario: scenario.name,
      brokers,
      databaseUrl,
      stackEnv: { ...refined.stackEnv, ...stackEnv },
      memoryLimitMiB,
      resultsDir: values['results-dir'] ?? 'bench/results',
    };
  };
  // Contradictions show now, before anything starts.
  const resolved = new Map(chosen.map((s) => [s.name, resolve(s)]));
  return {
    help,
    target: target as ScenarioName | 'all',
    scenarios: chosen.map((s) => s.name),
    usage: target === 'all' ? usage(scenarios) : usage(scenarios, chosen[0]),
    optionsFor(scenario) {
      if (!brokers)
        throw new UsageError('no Kafka brokers: run through `npm run bench` or pass --brokers');
      if (!databaseUrl)
        throw new UsageError('no PostgreSQL: run through `npm run bench` or pass --database-url');
      const options = resolved.get(scenario);
      if (!options) throw new UsageError(`${scenario} was not chosen`);
      return options;
    },
  };
}
