import { askedBehaviour } from '../core/behaviour';
import { Breakdown, breakdownTable, latencyBreakdown, wallMinusBench } from '../core/breakdown';
import { createApplications, createOrganization, Tenant } from '../core/hookbase-api';
import { blockRouter, Ledger, LedgerSink, SEQ_BLOCK } from '../core/ledger';
import { planEvents } from '../core/pacing';
import { fmtInt, fmtMs, fmtRate } from '../core/report';
import { RunReport, ScenarioResult } from '../core/result';
import { BenchSession, Scenario, ScenarioContext } from '../core/session';
import { eachLimited, now } from '../core/util';
import { IngestClient, publishSeq } from '../drivers/ingest-clients';
import { runOpenLoop } from '../drivers/publisher';
import {
  comparableCommand,
  groupOf,
  groupSpread,
  offeredDeliveries,
  refineGroups,
  splitEvenly,
} from './e2e-groups';

/** Retries shortened through the API so a failed first attempt is retried within the run. */
export const SHORT_RETRY = { delaysMs: [0, 200, 1000], maxAgeMs: 60_000 };

/** --routing: every endpoint's channels and filter, all of which every bench event passes, so the
 * deliveries stay the same and the difference is the cost of the rule. */
const ROUTED_ENDPOINT = {
  channels: ['bench', 'vip'],
  filter: {
    eventType: 'bench.event',
    'payload.s': { $gte: 0 },
    $or: [{ 'payload.pad': { $exists: true } }, { 'payload.s': { $lt: 1e12 } }],
  },
};
/** The channels of every bench event under --routing. */
const ROUTED_CHANNELS = ['bench'];

/** What every bench endpoint is created with: short retries, and --routing's rule. */
const endpointRequest = (options: ScenarioContext['options']) => ({
  retry: SHORT_RETRY,
  ...(options.routing ? ROUTED_ENDPOINT : {}),
});

/** What one event reaches: an organization's endpoints, or one application's (see e2e-groups). */
interface RecipientGroup {
  /** The publish client with its organization's API key. */
  client: IngestClient;
  applicationId?: string;
  /** The group's endpoints named in the publish (`endpointIds`), when no application names them. */
  endpointIds?: string[];
  endpoints: readonly number[];
  targets: ReadonlySet<number>;
}

/**
 * Before the measured run, the same load for this long into a ledger of its own (its sequence
 * numbers in block 1), drained and not measured: a freshly started process otherwise pays for its
 * first connections (the receiver's, PostgreSQL's pool) and the JIT inside the run, which was the
 * whole of the first second's p99 here.
 */
export const WARM_UP_SECONDS = 2;

/** The open loop: --rate events/s for `seconds`, round-robin over the groups, into `ledger`. */
function groupLoad(
  session: BenchSession,
  groups: readonly RecipientGroup[],
  ledger: Ledger,
  seconds: number,
  firstSeq = 0,
) {
  const { options, deadlineMs } = session.ctx;
  const { payloadBytes, maxInFlight } = options;
  return runOpenLoop({
    ratePerSecond: options.rate,
    count: planEvents(options.rate, seconds),
    maxInFlight,
    deadlineMs: Math.min(deadlineMs, now() + seconds * 1000 + 30_000),
    send: (seq, at) => {
      const group = groups[groupOf(seq, groups.length)];
      return publishSeq(ledger, group.client, firstSeq + seq, at, {
        targets: group.targets,
        payloadBytes,
        ...(options.routing ? { channels: ROUTED_CHANNELS } : {}),
        ...(group.applicationId ? { applicationId: group.applicationId } : {}),
        ...(group.endpointIds ? { endpointIds: group.endpointIds } : {}),
      });
    },
  });
}

/**
 * One e2e run: warm-up (WARM_UP_SECONDS of the same load, drained, not measured) → load (--rate
 * events/s for --duration s, round-robin over the groups, each event fanned out to all its
 * group's endpoints: no endpointIds) → drain → reconcile → the run's report.
 */
async function fanOutRun(
  session: BenchSession,
  spec: {
    label: string;
    groups: readonly RecipientGroup[];
    ledger: Ledger;
    warmUp: Ledger;
    drainByMs: number;
  },
) {
  const { options } = session.ctx;
  const { groups } = spec;
  session.watch(`${spec.label}: warm-up`, [spec.warmUp], null);
  await groupLoad(session, groups, spec.warmUp, WARM_UP_SECONDS, SEQ_BLOCK);
  const warmUpBy = Math.min(spec.drainByMs, now() + options.drainTimeoutSeconds * 1000);
  await session.drain([spec.warmUp], warmUpBy);
  return session.deliveryRun({
    label: spec.label,
    ledger: spec.ledger,
    planned: planEvents(options.rate, options.durationSeconds),
    offeredPerSecond: offeredDeliveries(
      options.rate,
      groups.map((g) => g.endpoints.length),
    ),
    drainSeconds: options.drainTimeoutSeconds,
    drainByMs: spec.drainByMs,
    load: () => groupLoad(session, groups, spec.ledger, options.durationSeconds),
  });
}

/** --organizations organizations (plan free, a key each), `concurrency` created at a time. */
async function createOrganizations(session: BenchSession, count: number): Promise<Tenant[]> {
  const tenants = new Array<Tenant>(count);
  let created = 0;
  session.setPhase(
    'setup',
    () => `organizations ${fmtInt(created)}/${fmtInt(count)}`,
    () => created / count,
  );
  const indexes = Array.from({ length: count }, (_, i) => i);
  await eachLimited(indexes, 8, async (i) => {
    tenants[i] = await createOrganization(session.stack, 'free');
    created++;
  });
  return tenants;
}

/**
 * The recipient groups: --endpoints http endpoints (receiver paths from `first`) split evenly
 * over --organizations organizations, or all in one organization; each group publishes with its
 * organization's key.
 */
async function createGroups(session: BenchSession, ledger: LedgerSink, first: number) {
  const { options } = session.ctx;
  const { organizations, maxInFlight } = options;
  const blocks = splitEvenly(options.endpoints, Math.max(organizations, 1), first);
  const tenants =
    organizations > 1
      ? await createOrganizations(session, organizations)
      : [await createOrganization(session.stack, 'free')];
  const endpointIds = new Map<string, number>();
  for (const [k, endpoints] of blocks.entries()) {
    const tenant = tenants[organizations > 1 ? k : 0];
    const ids = await session.addEndpoints(
      tenant,
      endpoints,
      ledger,
      askedBehaviour(options),
      endpointRequest(options),
    );
    ids.forEach((id, i) => endpointIds.set(id, endpoints[i]));
  }
  // Round-robin gives each organization about maxInFlight / organizations publishes in flight.
  const connections = Math.min(
    maxInFlight,
    Math.max(4, Math.ceil((2 * maxInFlight) / tenants.length)),
  );
  const clients = tenants.map(
    (t) => new IngestClient(session.stack.ingestUrl, t.apiKey, connections),
  );
  const groups = blocks.map((endpoints, k): RecipientGroup => ({
    client: clients[organizations > 1 ? k : 0],
    endpoints,
    targets: new Set(endpoints),
  }));
  return { groups, endpointIds, close: () => Promise.all(clients.map((c) => c.close())) };
}

/** The groups and their run. */
async function httpRun(session: BenchSession, label: string, first: number) {
  const ledger = new Ledger(label);
  const warmUp = new Ledger(`${label} warm-up`);
  const router = blockRouter([ledger, warmUp]);
  const { groups, endpointIds, close } = await createGroups(session, router, first);
  try {
    const drainByMs = session.ctx.deadlineMs;
    const clockAtStart = wallMinusBench();
    const result = await fanOutRun(session, { label, groups, ledger, warmUp, drainByMs });
    // After the drain (nothing measured runs any more): where each delivered message's time went.
    session.setPhase('breakdown', () => 'reading stage times from PostgreSQL');
    const breakdown = await latencyBreakdown(
      session.stack.databaseUrl,
      ledger,
      endpointIds,
      clockAtStart,
    ).catch((error: Error) => error);
    const groupOfEndpoint = new Map(groups.flatMap((g, k) => g.endpoints.map((e) => [e, k])));
    const latencies = ledger
      .deliveries()
      .map((d) => ({ endpoint: d.endpoint, latencyMs: d.deliveredAt - d.scheduledAt }));
    return { ...result, breakdown, spread: groupSpread(latencies, groupOfEndpoint) };
  } finally {
    await close();
  }
}

/**
 * --applications: the same load twice in one session, so the two runs share the machine's state
 * and differ only in how an event names its recipients. --endpoints endpoints of one organization
 * in --applications applications, each event published to one application (`applicationId`); and
 * as many organization-level endpoints in groups of the same size, each event naming its group's
 * endpoints (`endpointIds`). The same events/s, the same deliveries per event, the same receiver:
 * the ratio is what routing by application costs. Run without applications first, then with.
 */
async function applicationRuns(session: BenchSession) {
  const { options } = session.ctx;
  const tenant = await createOrganization(session.stack, 'free');
  const applicationIds = await createApplications(tenant, options.applications, 8);
  const client = new IngestClient(session.stack.ingestUrl, tenant.apiKey, options.maxInFlight);
  const prepare = async (label: string, first: number, inApplications: boolean) => {
    const ledger = new Ledger(label);
    const warmUp = new Ledger(`${label} warm-up`);
    const router = blockRouter([ledger, warmUp]);
    const groups: RecipientGroup[] = [];
    const blocks = splitEvenly(options.endpoints, options.applications, first);
    for (const [k, endpoints] of blocks.entries()) {
      const applicationId = inApplications ? applicationIds[k] : undefined;
      const ids = await session.addEndpoints(tenant, endpoints, router, askedBehaviour(options), {
        ...endpointRequest(options),
        ...(applicationId ? { applicationId } : {}),
      });
      groups.push({
        client,
        ...(applicationId ? { applicationId } : { endpointIds: ids }),
        endpoints,
        targets: new Set(endpoints),
      });
    }
    return { label, ledger, warmUp, groups };
  };
  try {
    const without = await prepare('without applications', 0, false);
    const within = await prepare('with applications', options.endpoints, true);
    const drainByMs = session.ctx.deadlineMs;
    const first = await fanOutRun(session, { ...without, drainByMs });
    const second = await fanOutRun(session, { ...within, drainByMs });
    return { runs: [first.run, second.run], problems: [...first.problems, ...second.problems] };
  } finally {
    await client.close();
  }
}

/** e2e --applications: both runs, and the with ÷ without ratios. */
async function runApplications(session: BenchSession): Promise<ScenarioResult> {
  const { options } = session.ctx;
  const { runs, problems } = await applicationRuns(session);
  const [without, within] = runs;
  const ratio = (a?: number | null, b?: number | null) => (a && b ? (a / b).toFixed(2) : '–');
  return session.result({
    summary: `with applications ${brief(within)}; without ${brief(without)}`,
    title: `${spreadOf(options)}, ${options.rate} events/s for ${options.durationSeconds} s, with and without applications`,
    headline: [
      ...runs.flatMap(headlineOf),
      [
        'with ÷ without applications',
        `deliveries/s ${ratio(within.throughputPerSecond, without.throughputPerSecond)} · p50 ${ratio(within.latency?.p50, without.latency?.p50)} · p99 ${ratio(within.latency?.p99, without.latency?.p99)}`,
      ],
      ['dead letters by reason', JSON.stringify(session.reasonsFor())],
    ],
    runs,
    problems,
    notes: [
      'the same events in both runs, each reaching the same number of endpoints: by application (applicationId) in one, by endpointIds of organization-level endpoints in the other',
    ],
  });
}

/** What the Runs table does not show already: offered load, peak bucket, the publisher's side. */
function headlineOf(run: RunReport): [string, string][] {
  const bucket = run.timeline.length > 1 ? run.timeline[1].t - run.timeline[0].t : 1;
  const { lag, ledger } = run;
  return [
    [
      `${run.label}: deliveries/s`,
      `${fmtRate(run.throughputPerSecond)} (peak ${fmtRate(run.peakDeliveredPerSecond)} in a ${bucket} s bucket); offered ${fmtRate(run.offeredPerSecond)}; latency (received − scheduled) in the Runs table`,
    ],
    [
      `${run.label}: publish`,
      `send delay p99 ${fmtMs(run.sendDelay?.p99)} · accept p50 ${fmtMs(run.acceptLatency?.p50)} p99 ${fmtMs(run.acceptLatency?.p99)} · peak fan-out lag ${fmtInt(lag.peak?.fanout)} · ${fmtInt(ledger.messages.failedAttempts)} attempts failed on purpose or dropped`,
    ],
  ];
}

/** How the endpoints and events are spread, for the title. */
function spreadOf(options: ScenarioContext['options']): string {
  const { endpoints, organizations, applications } = options;
  const per = (groups: number) => {
    const each = endpoints / groups;
    return Number.isInteger(each) ? fmtInt(each) : `about ${each.toFixed(1)}`;
  };
  if (organizations > 1)
    return `${fmtInt(endpoints)} endpoints over ${fmtInt(organizations)} organizations (a key each), each event to one organization's ${per(organizations)} (round-robin)`;
  if (applications > 0)
    return `${fmtInt(endpoints)} endpoints over ${fmtInt(applications)} applications of one organization, each event to one application's ${per(applications)} (round-robin)`;
  return `${fmtInt(endpoints)} endpoints, fan-out to all`;
}

/** How evenly the organizations or applications were served. */
function spreadRow(spread: NonNullable<ReturnType<typeof groupSpread>>, organizations: boolean) {
  const kind = organizations ? 'organization' : 'application';
  return [
    `p99 per ${kind}`,
    `received − scheduled: median over the ${fmtInt(spread.groups)} ${kind}s ${fmtMs(spread.medianP99)}, worst ${fmtMs(spread.worstP99)} (${kind} ${spread.worstGroup + 1})`,
  ] as [string, string];
}

/** The breakdown's clocks, or why there is none. */
function breakdownRow(breakdown: Breakdown | Error): [string, string] {
  if (breakdown instanceof Error) return ['latency breakdown', `not read: ${breakdown.message}`];
  const unmatched =
    breakdown.unmatched > 0 ? `; ${fmtInt(breakdown.unmatched)} rows unmatched` : '';
  return [
    'latency breakdown clocks',
    `Hookbase's wall clock (ingest, fan-out, dispatcher, PostgreSQL now()) moved onto the bench's; they drifted ${breakdown.clockDriftMs.toFixed(2)} ms apart over the run${unmatched}`,
  ];
}

const brief = (run: RunReport) =>
  `${fmtRate(run.throughputPerSecond)} deliveries/s, p50 ${fmtMs(run.latency?.p50)}, p99 ${fmtMs(run.latency?.p99)}`;

/**
 * e2e: --endpoints endpoints (1,000) of one organization, each subscribed to every type,
 * unordered; every event fans out to all of them, so the figure is fan-out + dispatch (ingest
 * alone is ingest-rest's). With --fail-rate the receiver fails that share of first attempts.
 * --organizations or --applications split the endpoints into groups and each event goes to one
 * group (round-robin).
 */
async function runE2e(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { options } = ctx;
  const session = await BenchSession.open(ctx);
  try {
    if (options.applications > 0) return await runApplications(session);
    const { run, problems, breakdown, spread } = await httpRun(session, 'e2e', 0);
    const m = run.ledger.messages;
    const failing =
      options.failRate > 0
        ? `, receiver fails ${options.failRate * 100}% of first attempts with ${options.failWith}`
        : '';
    const groups = Math.max(options.organizations, options.applications, 1);
    const comparable = comparableCommand({ ...options, groups });
    return await session.result({
      summary: `${brief(run)}, missing ${fmtInt(m.missing)}, duplicates ${fmtInt(m.duplicates)}`,
      title: `${spreadOf(options)}, ${options.rate} events/s for ${options.durationSeconds} s${failing}`,
      headline: [
        ...headlineOf(run),
        ['dead letters by reason', JSON.stringify(session.reasonsFor())],
        ...(comparable
          ? [['the same deliveries/s without groups', comparable] as [string, string]]
          : []),
        ...(spread ? [spreadRow(spread, options.organizations > 1)] : []),
        breakdownRow(breakdown),
      ],
      tables: breakdown instanceof Error ? [] : [breakdownTable(breakdown)],
      runs: [run],
      problems,
      extra: { breakdown: breakdown instanceof Error ? { error: breakdown.message } : breakdown },
      notes: [
        groups > 1
          ? `each event is fanned out to every endpoint of one ${options.organizations > 1 ? 'organization' : 'application'} (no endpointIds), round-robin over them: deliveries/s measures fan-out + dispatch, not ingest`
          : 'each event is fanned out to every endpoint (no endpointIds): deliveries/s measures fan-out + dispatch, not ingest',
      ],
    });
  } finally {
    await session.close();
  }
}

export const E2E: Scenario = {
  name: 'e2e',
  summary:
    'fan-out to --endpoints endpoints, --rate events/s for --duration s;\n--organizations or --applications split them, each event to one',
  flags: [
    'endpoints',
    'rate',
    'duration',
    'max-in-flight',
    'receiver-latency',
    'fail-rate',
    'fail-status',
    'routing',
    'organizations',
    'applications',
  ],
  defaults: {
    endpoints: 1000,
    rate: 1,
    durationSeconds: 20,
    drainTimeoutSeconds: 90,
    organizations: 1,
    applications: 0,
  },
  refine: (given) => ({ defaults: refineGroups(given) }),
  run: runE2e,
};
