import { Client } from 'pg';
import { Ledger } from './ledger';
import { fmtInt, fmtMs, table } from './report';
import { ResultTable } from './result';
import { distribution, Distribution } from './stats';
import { now } from './util';

/**
 * Where a delivered message's time went: the stage times Hookbase records in PostgreSQL beside
 * the bench's own publish and receipt times, read after the drain from the run's database.
 */

/** One delivered message's stage times, every one on the bench's clock (ms). */
export interface StageTimes {
  /** The bench sent the publish. */
  sentAt: number;
  /** `events.accepted_at`: ingest's clock when it accepted the event, before producing it. */
  acceptedAt: number;
  /** `messages.created_at`: PostgreSQL's now() in the fan-out's transaction (its start). */
  fannedOutAt: number;
  /** `attempts.started_at` of the first successful attempt: the dispatcher's clock. */
  attemptStartedAt: number;
  /** The earliest `attemptStartedAt` among the messages of the same event (in the sample). */
  eventFirstAttemptAt: number;
  /** The receiver's clock when the request arrived. */
  receivedAt: number;
  /** `attempts.started_at + duration_ms`: the dispatcher had the answer. */
  attemptEndedAt: number;
}

type Stage = keyof StageTimes;

/**
 * The hops, in path order: the first four add up to publish → received for every message. The
 * last one is inside `fan-out → attempt`: how long after its event's first attempt a message's
 * attempt started, the dispatcher starting an event's attempts one after another.
 */
export const HOPS: readonly { hop: string; from: Stage; to: Stage; what: string }[] = [
  {
    hop: 'publish → accepted',
    from: 'sentAt',
    to: 'acceptedAt',
    what: 'bench sent → events.accepted_at',
  },
  {
    hop: 'accepted → fan-out',
    from: 'acceptedAt',
    to: 'fannedOutAt',
    what: 'events.accepted_at → messages.created_at',
  },
  {
    hop: 'fan-out → attempt',
    from: 'fannedOutAt',
    to: 'attemptStartedAt',
    what: 'messages.created_at → attempts.started_at',
  },
  {
    hop: 'attempt → received',
    from: 'attemptStartedAt',
    to: 'receivedAt',
    what: 'attempts.started_at → receiver',
  },
  {
    hop: 'received → answered',
    from: 'receivedAt',
    to: 'attemptEndedAt',
    what: 'receiver → started_at + duration_ms',
  },
  { hop: 'publish → received', from: 'sentAt', to: 'receivedAt', what: 'the whole path' },
  {
    hop: 'first attempt → this',
    from: 'eventFirstAttemptAt',
    to: 'attemptStartedAt',
    what: "the event's first attempt → this one's start (within fan-out → attempt)",
  },
];

export interface HopFigure {
  hop: string;
  what: string;
  ms: Distribution | null;
}

/** Each hop's distribution over the messages (nearest-rank, as every bench figure). */
export function hopFigures(stages: readonly StageTimes[]): HopFigure[] {
  return HOPS.map(({ hop, what, from, to }) => ({
    hop,
    what,
    ms: distribution(stages.map((s) => s[to] - s[from])),
  }));
}

/** A message's row as read from PostgreSQL: wall-clock milliseconds. */
export interface StageRow {
  eventId: string;
  endpointId: string;
  acceptedMs: number;
  fannedOutMs: number;
  attemptStartedMs: number;
  durationMs: number;
}

/**
 * Rows joined with the ledger's times: `event` gives an event's sequence number and send time,
 * `endpoints` the bench index of a Hookbase endpoint id, `receivedAt` the first 2xx receipt.
 * Hookbase's wall-clock times move to the bench's clock by `wallMinusBenchMs`. Rows the ledger
 * cannot place are left out (and counted).
 */
export function joinStages(
  rows: readonly StageRow[],
  lookups: {
    event(eventId: string): { seq: number; sentAt: number } | undefined;
    endpoints: ReadonlyMap<string, number>;
    receivedAt(seq: number, endpoint: number): number | undefined;
    wallMinusBenchMs: number;
  },
): { stages: StageTimes[]; unmatched: number } {
  const stages: StageTimes[] = [];
  const eventOf: string[] = [];
  const firstAttempt = new Map<string, number>();
  let unmatched = 0;
  const bench = (wallMs: number) => wallMs - lookups.wallMinusBenchMs;
  for (const row of rows) {
    const event = lookups.event(row.eventId);
    const endpoint = lookups.endpoints.get(row.endpointId);
    const receivedAt =
      event && endpoint !== undefined ? lookups.receivedAt(event.seq, endpoint) : undefined;
    if (!event || receivedAt === undefined || !Number.isFinite(event.sentAt)) {
      unmatched++;
      continue;
    }
    const attemptStartedAt = bench(row.attemptStartedMs);
    stages.push({
      sentAt: event.sentAt,
      acceptedAt: bench(row.acceptedMs),
      fannedOutAt: bench(row.fannedOutMs),
      attemptStartedAt,
      eventFirstAttemptAt: attemptStartedAt,
      receivedAt,
      attemptEndedAt: attemptStartedAt + row.durationMs,
    });
    const first = firstAttempt.get(row.eventId);
    if (first === undefined || attemptStartedAt < first)
      firstAttempt.set(row.eventId, attemptStartedAt);
    eventOf.push(row.eventId);
  }
  stages.forEach((stage, i) => (stage.eventFirstAttemptAt = firstAttempt.get(eventOf[i])!));
  return { stages, unmatched };
}

/**
 * Every `stride`-th of the events so that their messages stay under `cap` (all of them when they
 * already do): the breakdown reads a sample at saturation, not a hundred thousand rows.
 */
export function sampleEvents<T>(events: readonly T[], messagesPerEvent: number, cap: number): T[] {
  const stride = Math.max(1, Math.ceil((events.length * messagesPerEvent) / cap));
  return events.filter((_, i) => i % stride === 0);
}

/** The first successful attempt of each message of these events, with its event's and message's times. */
export async function readStageRows(databaseUrl: string, eventIds: string[]): Promise<StageRow[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;
    const { rows } = await client.query<StageRow>(
      `SELECT m.event_id AS "eventId", m.endpoint_id AS "endpointId",
              ${ms('e.accepted_at')} AS "acceptedMs", ${ms('m.created_at')} AS "fannedOutMs",
              ${ms('a.started_at')} AS "attemptStartedMs", a.duration_ms AS "durationMs"
         FROM messages m
         JOIN events e ON e.id = m.event_id
         JOIN LATERAL (SELECT started_at, duration_ms FROM attempts
                        WHERE message_id = m.id AND outcome = 'succeeded'
                        ORDER BY attempt_number LIMIT 1) a ON true
        WHERE m.event_id = ANY($1::text[]) AND m.replay_of IS NULL`,
      [eventIds],
    );
    return rows;
  } finally {
    await client.end();
  }
}

/** Messages the breakdown reads at most. */
const MESSAGE_CAP = 50_000;

/** The wall clock minus the bench's (monotonic since it started), now. */
export const wallMinusBench = () => Date.now() - now();

/**
 * The breakdown of a run whose delivered messages are in `ledger`, `endpoints` mapping Hookbase's
 * endpoint ids to the bench's indexes; `wallMinusBenchAtStartMs` taken before the load (the two
 * clocks' difference is read again now, and their mean used).
 */
export async function latencyBreakdown(
  databaseUrl: string,
  ledger: Ledger,
  endpoints: ReadonlyMap<string, number>,
  wallMinusBenchAtStartMs: number,
) {
  const accepted = ledger.allEvents().filter((e) => e.outcome === 'accepted' && e.eventId);
  const fanOut = accepted.length > 0 ? ledger.progress.expected / accepted.length : 1;
  const sample = sampleEvents(accepted, fanOut, MESSAGE_CAP);
  const bySeq = new Map(sample.map((e) => [e.eventId!, { seq: e.seq, sentAt: e.sentAt }]));
  const received = new Map(ledger.deliveries().map((d) => [`${d.seq}:${d.endpoint}`, d]));
  const atEnd = wallMinusBench();
  const rows = await readStageRows(databaseUrl, [...bySeq.keys()]);
  const { stages, unmatched } = joinStages(rows, {
    event: (id) => bySeq.get(id),
    endpoints,
    receivedAt: (seq, endpoint) => received.get(`${seq}:${endpoint}`)?.deliveredAt,
    wallMinusBenchMs: (wallMinusBenchAtStartMs + atEnd) / 2,
  });
  return {
    events: sample.length,
    of: accepted.length,
    messages: stages.length,
    unmatched,
    clockDriftMs: atEnd - wallMinusBenchAtStartMs,
    hops: hopFigures(stages),
  };
}

export type Breakdown = Awaited<ReturnType<typeof latencyBreakdown>>;

/** The breakdown as the report prints it. */
export function breakdownTable(breakdown: Breakdown): ResultTable {
  const sampled =
    breakdown.events < breakdown.of
      ? `${fmtInt(breakdown.events)} of ${fmtInt(breakdown.of)} events`
      : `${fmtInt(breakdown.events)} events`;
  return table(
    `Latency breakdown (${fmtInt(breakdown.messages)} delivered messages of ${sampled}, first successful attempt; times from PostgreSQL)`,
    breakdown.hops,
    [
      ['hop', (h) => h.hop],
      ['p50', (h) => fmtMs(h.ms?.p50)],
      ['p95', (h) => fmtMs(h.ms?.p95)],
      ['p99', (h) => fmtMs(h.ms?.p99)],
      ['max', (h) => fmtMs(h.ms?.max)],
      ['from → to', (h) => h.what],
    ],
  );
}
