import { SCENARIO_LIST } from '../scenarios';
import { parseCommandLine as parseAgainst, SCENARIOS, UsageError } from './options';

const env = {
  HOOKBASE_BENCH_KAFKA_BROKERS: '127.0.0.1:19092',
  HOOKBASE_BENCH_DATABASE_URL: 'postgres://x',
};

const parseCommandLine = (argv: string[], environment: Record<string, string>) =>
  parseAgainst(argv, environment, SCENARIO_LIST);

describe('parseCommandLine', () => {
  it('gives each scenario its own defaults', () => {
    const e2e = parseCommandLine(['e2e'], env).optionsFor('e2e');
    expect(e2e).toMatchObject({
      scenario: 'e2e',
      endpoints: 1000,
      rate: 1,
      failRate: 0,
      failWith: 503,
      brokers: '127.0.0.1:19092',
      databaseUrl: 'postgres://x',
      topology: 'standalone',
      logLevel: 'warn',
    });
    expect(parseCommandLine(['fifo-rtt'], env).optionsFor('fifo-rtt').receiverLatencyMs).toBe(10);
    expect(parseCommandLine(['ingest-rest'], env).optionsFor('ingest-rest').steps).toEqual([
      1, 8, 32, 128,
    ]);
  });

  it('runs isolation on FIFO lanes loaded below what they carry, unless told otherwise', () => {
    const of = (...args: string[]) =>
      parseCommandLine(['isolation', ...args], env).optionsFor('isolation');
    expect(of()).toMatchObject({ rate: 50, fifo: true, neighbourBacklog: null });
    expect(of('--non-fifo')).toMatchObject({ rate: 150, fifo: false, nonFifo: true });
    expect(of('--rate', '80', '--neighbour-backlog', '1000')).toMatchObject({
      rate: 80,
      neighbourBacklog: 1000,
    });
  });

  it('runs isolation --tenants on plain endpoints of two organizations, one hanging', () => {
    const of = (...args: string[]) =>
      parseCommandLine(['isolation', '--tenants', ...args], env).optionsFor('isolation');
    expect(of()).toMatchObject({
      tenants: true,
      fifo: false,
      rounds: 5,
      neighbours: 30,
      rate: 25,
      neighbourRate: 2,
      neighbourLatencyMs: 60_000,
      stackEnv: {
        HOOKBASE_DELIVERY_TIMEOUT_MS: '5000',
        HOOKBASE_CIRCUIT_FAILURE_THRESHOLD: '1000',
      },
    });
    expect(
      of('--neighbours', '5', '--rounds', '3', '--stack-env', 'HOOKBASE_DELIVERY_TIMEOUT_MS=8000'),
    ).toMatchObject({
      neighbours: 5,
      rounds: 3,
      stackEnv: {
        HOOKBASE_DELIVERY_TIMEOUT_MS: '8000',
        HOOKBASE_CIRCUIT_FAILURE_THRESHOLD: '1000',
      },
    });
    // Only isolation --tenants changes the stack.
    expect(parseCommandLine(['isolation'], env).optionsFor('isolation').stackEnv).toEqual({});
  });

  it('lets the command line override defaults', () => {
    const line = parseCommandLine(
      [
        'e2e',
        '--fail-rate',
        '0.1',
        '--fail-status',
        '503',
        '--endpoints',
        '50',
        '--stack-env',
        'HOOKBASE_ENDPOINT_CONCURRENCY=4',
        '--memory-limit',
        '512',
      ],
      env,
    );
    expect(line.optionsFor('e2e')).toMatchObject({
      failRate: 0.1,
      failWith: 503,
      endpoints: 50,
      stackEnv: { HOOKBASE_ENDPOINT_CONCURRENCY: '4' },
      memoryLimitMiB: 512,
    });
    expect(parseCommandLine(['e2e'], env).optionsFor('e2e').memoryLimitMiB).toBeNull();
    expect(parseCommandLine(['e2e', '--fail-status', 'drop'], env).optionsFor('e2e').failWith).toBe(
      'drop',
    );
    expect(
      parseCommandLine(['ingest-rest', '--steps', '2, 4'], env).optionsFor('ingest-rest').steps,
    ).toEqual([2, 4]);
  });

  it('gives the ingest scenarios their steps, batch sizes and raw baseline', () => {
    const batch = parseCommandLine(['ingest-batch'], env).optionsFor('ingest-batch');
    expect(batch).toMatchObject({
      endpoints: 0,
      batchSizes: [100, 500],
      batchSteps: [1, 4, 16],
      records: 100_000,
      batch: 500,
    });
    expect(parseCommandLine(['ingest-grpc'], env).optionsFor('ingest-grpc').steps).toEqual([
      1, 8, 32, 128,
    ]);
    expect(parseCommandLine(['ingest-kafka'], env).optionsFor('ingest-kafka')).toMatchObject({
      events: 100_000,
      organizations: 6,
      rate: 0,
      durationSeconds: 8,
    });
    const given = parseCommandLine(
      ['ingest-grpc', '--batch-sizes', '50, 250', '--batch-steps', '2'],
      env,
    ).optionsFor('ingest-grpc');
    expect(given).toMatchObject({ batchSizes: [50, 250], batchSteps: [2] });
    expect(
      parseCommandLine(['ingest-kafka', '--organizations', '3'], env).optionsFor('ingest-kafka')
        .organizations,
    ).toBe(3);
  });

  it('expands all into every scenario, in order', () => {
    const line = parseCommandLine(['all'], env);
    expect(line.target).toBe('all');
    expect(line.scenarios).toEqual([...SCENARIOS]);
    expect(line.scenarios.slice(0, 4)).toEqual([
      'ingest-rest',
      'ingest-batch',
      'ingest-grpc',
      'ingest-kafka',
    ]);
  });

  it('refuses what it cannot use, saying why', () => {
    const refuses = (argv: string[], pattern: RegExp) => {
      expect(() => parseCommandLine(argv, env)).toThrow(UsageError);
      expect(() => parseCommandLine(argv, env)).toThrow(pattern);
    };
    refuses([], /name a scenario/);
    refuses(['nope'], /unknown scenario "nope"/);
    refuses(['e2e', '--fail-rate', '2'], /--fail-rate must be a number from 0 to 1/);
    refuses(['e2e', '--fail-status', '200'], /400\.\.599/);
    refuses(['e2e', '--endpoints', '1.5'], /integer/);
    refuses(['e2e', '--bogus'], /bogus/);
    refuses(['e2e', '--topology', 'mesh'], /one of standalone, split/);
    refuses(['e2e', '--stack-env', 'lower=1'], /KEY=VALUE/);
    refuses(['e2e', '--memory-limit', '10'], /--memory-limit must be an integer from 64/);
    refuses(['e2e', '--memory-limit', '1Gi'], /--memory-limit must be an integer/);
    refuses(['isolation', '--tenants', '--non-fifo'], /plain endpoints/);
    refuses(['e2e', '--tenants'], /goes with the isolation scenario/);
    refuses(['isolation', '--neighbours', '3'], /--tenants/);
    refuses(['isolation', '--tenants', '--neighbours', '0'], /neighbours/);
  });

  it('takes no flags of a stack it does not start', () => {
    for (const flag of ['--url', '--tracing', '--metrics', '--grpc-address', '--kind'])
      expect(() => parseCommandLine(['e2e', flag, 'x'], env)).toThrow(UsageError);
    expect(() => parseCommandLine(['fifo-rtt', '--non-fifo'], env)).toThrow(/isolation/);
  });

  it('needs infrastructure only when a scenario runs', () => {
    const line = parseCommandLine(['e2e'], {});
    expect(() => line.optionsFor('e2e')).toThrow(/Kafka brokers/);
    const noDatabase = parseCommandLine(['e2e', '--brokers', 'b:1'], {});
    expect(() => noDatabase.optionsFor('e2e')).toThrow(/PostgreSQL/);
    const given = parseCommandLine(
      ['e2e', '--brokers', 'b:1', '--database-url', 'postgres://y'],
      {},
    );
    expect(given.optionsFor('e2e')).toMatchObject({ brokers: 'b:1', databaseUrl: 'postgres://y' });
  });

  it('shows help without a scenario', () => {
    const line = parseCommandLine(['--help'], {});
    expect(line.help).toBe(true);
    for (const name of SCENARIOS) expect(line.usage).toContain(`  ${name} `);
  });

  it("shows a scenario's own flags with its defaults after the scenario", () => {
    const text = parseCommandLine(['fifo-many', '--help'], {}).usage;
    expect(text).toMatch(/--endpoints N +endpoints to create \(500\)/);
    expect(text).toMatch(/--receiver-latency MS .*\(10\)/);
    expect(text).not.toContain('--steps');
    // A scenario's default variant shows its own defaults: isolation runs FIFO lanes at 50/s.
    expect(parseCommandLine(['isolation', '--help'], {}).usage).toMatch(/--rate N .*\(50\)/);
  });
});

describe('per-scenario options', () => {
  it('takes only the flags a scenario declares, naming the scenarios a flag goes with', () => {
    expect(() => parseCommandLine(['ingest-grpc', '--organizations', '3'], env)).toThrow(
      /--organizations goes with the ingest-kafka, e2e scenarios$/,
    );
    expect(() => parseCommandLine(['fifo-many', '--applications', '3'], env)).toThrow(
      /--applications goes with the e2e scenario$/,
    );
    expect(() => parseCommandLine(['fifo-rtt', '--steps', '1'], env)).toThrow(
      /--steps goes with the ingest-rest, ingest-grpc scenarios/,
    );
    expect(() => parseCommandLine(['isolation', '--fail-rate', '0.1'], env)).toThrow(UsageError);
    // The common flags go with every scenario.
    for (const name of SCENARIOS)
      expect(
        parseCommandLine([name, '--max-seconds', '30', '--payload-bytes', '64'], env).optionsFor(
          name,
        ),
      ).toMatchObject({ maxSeconds: 30, payloadBytes: 64 });
  });

  it('spreads e2e over organizations (one endpoint each by default) or applications', () => {
    const of = (...args: string[]) => parseCommandLine(['e2e', ...args], env).optionsFor('e2e');
    expect(of()).toMatchObject({ endpoints: 1000, organizations: 1, applications: 0 });
    expect(of('--organizations', '100', '--rate', '500')).toMatchObject({
      organizations: 100,
      endpoints: 100,
      rate: 500,
    });
    expect(of('--organizations', '10', '--endpoints', '50')).toMatchObject({ endpoints: 50 });
    expect(of('--applications', '100', '--rate', '100')).toMatchObject({
      applications: 100,
      endpoints: 1000,
      organizations: 1,
    });
    expect(() => of('--applications', '10', '--organizations', '10')).toThrow(UsageError);
    expect(() => of('--organizations', '10', '--endpoints', '9')).toThrow(UsageError);
    // ingest-kafka keeps its own default.
    expect(parseCommandLine(['ingest-kafka'], env).optionsFor('ingest-kafka').organizations).toBe(
      6,
    );
  });

  it('gives each scenario of all only the flags it declares', () => {
    const line = parseCommandLine(['all', '--duration', '3', '--steps', '2'], env);
    expect(line.optionsFor('e2e').durationSeconds).toBe(3);
    expect(line.optionsFor('ingest-kafka').durationSeconds).toBe(3);
    expect(line.optionsFor('ingest-rest').steps).toEqual([2]);
    expect(line.optionsFor('ingest-grpc').steps).toEqual([2]);
    // fifo-rtt does not read --duration: its default stays.
    expect(line.optionsFor('fifo-rtt').durationSeconds).toBe(10);
    expect(line.optionsFor('isolation').durationSeconds).toBe(3);
  });
});
