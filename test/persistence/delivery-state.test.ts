import { DataSource } from 'typeorm';
import { newId } from '@hookbase/domain';
import { createDataSource, MessageRepository, FifoLaneRepository } from '@hookbase/persistence';
import { createTestDatabase, pollUntil, testEnvironment } from '@hookbase/testing';

// The delivery state machine as PostgreSQL keeps it (ADR 19): each write moves only messages in a
// state its event leaves, sets status and route together, and the table refuses a status that
// its route does not allow.
describe('delivery state in PostgreSQL', () => {
  let database: { url: string; drop: () => Promise<void> };
  let dataSource: DataSource;
  let messages: MessageRepository;
  let lanes: FifoLaneRepository;
  const eventId = newId('evt');

  beforeAll(async () => {
    database = await createTestDatabase(testEnvironment().databaseUrl);
    dataSource = createDataSource({ url: database.url, poolSize: 3 });
    await dataSource.initialize();
    messages = new MessageRepository(dataSource);
    lanes = new FifoLaneRepository(dataSource);
    await dataSource.query(
      `INSERT INTO events (id, organization_id, event_type, payload, accepted_at, created_at)
       VALUES ($1, 'org_state', 't', '{}', now(), now())`,
      [eventId],
    );
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  interface Row {
    status: string;
    route: string;
    next_attempt_at: Date | null;
    claim_until: Date | null;
    finished_at: Date | null;
  }

  async function message(
    state: { status: string; route: string },
    columns: { nextAttemptAt?: Date; claimUntil?: Date; fifoSeq?: number } = {},
  ): Promise<string> {
    const id = newId('msg');
    await dataSource.query(
      `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, route,
                             attempts, max_attempts, next_attempt_at, claim_until, fifo_seq,
                             created_at, updated_at, finished_at)
       VALUES ($1, 'org_state', $2, $3, 't', $4, $5, 0, 5, $6, $7, $8, now(), now(),
               CASE WHEN $5 = 'final' THEN now() END)`,
      [
        id,
        eventId,
        newId('ep'),
        state.status,
        state.route,
        columns.nextAttemptAt ?? null,
        columns.claimUntil ?? null,
        columns.fifoSeq ?? null,
      ],
    );
    return id;
  }

  async function row(id: string): Promise<Row> {
    const [found]: Row[] = await dataSource.query(
      'SELECT status, route, next_attempt_at, claim_until, finished_at FROM messages WHERE id = $1',
      [id],
    );
    return found;
  }

  const STREAM_IN_FLIGHT = { status: 'in_flight', route: 'stream' };
  const past = () => new Date(Date.now() - 60_000);
  const future = () => new Date(Date.now() + 3_600_000);

  it('refuses a status its route does not allow', async () => {
    const id = await message({ status: 'pending', route: 'stream' });
    await expect(
      dataSource.query(`UPDATE messages SET status = 'awaiting_retry' WHERE id = $1`, [id]),
    ).rejects.toMatchObject({ code: '23514', constraint: 'ck_messages_route' });
    await expect(
      dataSource.query(`UPDATE messages SET route = 'final' WHERE id = $1`, [id]),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('holds a message on the stream onto the schedule, and leaves a finished one alone', async () => {
    const live = await message({ status: 'in_flight', route: 'stream' });
    const done = await message({ status: 'succeeded', route: 'final' });
    const until = future();
    await messages.hold([live, done], until);
    expect(await row(live)).toMatchObject({
      status: 'awaiting_retry',
      route: 'schedule',
      next_attempt_at: until,
    });
    expect(await row(done)).toMatchObject({ status: 'succeeded', route: 'final' });
  });

  it('claims due retries and lapsed claims for one attempt each under a lease of their own', async () => {
    const due = await message(
      { status: 'awaiting_retry', route: 'schedule' },
      { nextAttemptAt: past() },
    );
    const later = await message(
      { status: 'awaiting_retry', route: 'schedule' },
      { nextAttemptAt: future() },
    );
    const lapsed = await message(
      { status: 'in_flight', route: 'schedule' },
      { claimUntil: past() },
    );
    const leased = await message(
      { status: 'in_flight', route: 'schedule' },
      { claimUntil: future() },
    );
    const laneRetry = await message(
      { status: 'awaiting_retry', route: 'lane' },
      { nextAttemptAt: past(), fifoSeq: 1 },
    );
    const claimed = await messages.claimForRetry(100, 60_000);
    expect(claimed.map((c) => c.messageId).sort()).toEqual([due, lapsed].sort());
    for (const id of [due, lapsed]) {
      const claimedRow = await row(id);
      expect(claimedRow).toMatchObject({ status: 'in_flight', route: 'schedule' });
      expect(claimedRow.next_attempt_at).toBeNull();
      expect(claimedRow.claim_until!.getTime()).toBeGreaterThan(Date.now());
    }
    expect(await row(later)).toMatchObject({ status: 'awaiting_retry', route: 'schedule' });
    expect((await row(leased)).claim_until!.getTime()).toBeGreaterThan(Date.now());
    expect(await row(laneRetry)).toMatchObject({ status: 'awaiting_retry', route: 'lane' });

    await messages.claimForAttempt([due]);
    const attempting = await row(due);
    expect(attempting).toMatchObject({ status: 'in_flight', route: 'schedule' });
    expect(attempting.claim_until!.getTime()).toBeGreaterThan(Date.now());
  });

  it('claims a retry again when the process that started its attempt died before recording it', async () => {
    const id = await message(
      { status: 'awaiting_retry', route: 'schedule' },
      { nextAttemptAt: past() },
    );
    const leaseMs = 300;
    expect((await messages.claimForRetry(100, leaseMs)).map((c) => c.messageId)).toContain(id);
    await messages.claimForAttempt([id]);
    // The attempt never gets recorded; once the lease has passed, the schedule takes it again.
    const deadline = Date.now() + 10_000;
    let again: string[] = [];
    while (!again.includes(id) && Date.now() < deadline) {
      await new Promise((resolve) => setImmediate(resolve));
      again = (await messages.claimForRetry(100, 60_000)).map((c) => c.messageId);
    }
    expect(again).toContain(id);
    // A message that came off the stream keeps no lease: Kafka delivers it again instead.
    const streamed = await message({ status: 'pending', route: 'stream' });
    await messages.claimForAttempt([streamed]);
    expect(await row(streamed)).toMatchObject({ status: 'in_flight', claim_until: null });
  });

  it('scans the claim in due order on its own index', async () => {
    const plan: { 'QUERY PLAN': string }[] = await dataSource.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      return tx.query(
        `EXPLAIN SELECT id FROM messages
          WHERE route = 'schedule' AND COALESCE(claim_until, next_attempt_at) <= now()
          ORDER BY COALESCE(claim_until, next_attempt_at) LIMIT 200 FOR UPDATE SKIP LOCKED`,
      );
    });
    const text = plan.map((line) => line['QUERY PLAN']).join('\n');
    expect(text).toContain('Index Scan using idx_messages_schedule_due');
    expect(text).not.toContain('Sort');
  });

  it("records an attempt's outcome by the route it leaves from, and never revives a finished message", async () => {
    const fromStream = await message({ status: 'in_flight', route: 'stream' });
    const fromLane = await message({ status: 'fifo_waiting', route: 'lane' }, { fifoSeq: 2 });
    const cancelled = await message({ status: 'cancelled', route: 'final' });
    const succeeded = await message({ status: 'in_flight', route: 'schedule' });
    const nextAttemptAt = future();
    const attempt = (messageId: string, messageStatus: 'succeeded' | 'awaiting_retry') => ({
      messageId,
      attemptNumber: 1,
      startedAt: new Date(),
      durationMs: 5,
      outcome: messageStatus === 'succeeded' ? ('succeeded' as const) : ('retry' as const),
      responseStatus: messageStatus === 'succeeded' ? 200 : 503,
      responseExcerpt: null,
      error: null,
      messageStatus,
      nextAttemptAt: messageStatus === 'succeeded' ? null : nextAttemptAt,
    });
    await messages.recordAttempts([
      attempt(fromStream, 'awaiting_retry'),
      attempt(fromLane, 'awaiting_retry'),
      attempt(cancelled, 'awaiting_retry'),
      attempt(succeeded, 'succeeded'),
    ]);
    expect(await row(fromStream)).toMatchObject({ status: 'awaiting_retry', route: 'schedule' });
    expect(await row(fromLane)).toMatchObject({ status: 'awaiting_retry', route: 'lane' });
    expect(await row(cancelled)).toMatchObject({
      status: 'cancelled',
      route: 'final',
      next_attempt_at: null,
    });
    const finished = await row(succeeded);
    expect(finished).toMatchObject({ status: 'succeeded', route: 'final' });
    expect(finished.finished_at).not.toBeNull();
    // One attempt alone takes the prepared statement.
    const single = await message({ status: 'in_flight', route: 'stream' });
    await messages.recordAttempts([attempt(single, 'succeeded')]);
    expect(await row(single)).toMatchObject({ status: 'succeeded', route: 'final' });
    await messages.recordAttempts([{ ...attempt(single, 'awaiting_retry'), attemptNumber: 2 }]);
    expect(await row(single)).toMatchObject({ status: 'succeeded', route: 'final' });
  });

  it('records an attempt whose lane head was shown in flight while the record waited for the row', async () => {
    const id = await message({ status: 'fifo_waiting', route: 'lane' }, { fifoSeq: 4 });
    const record = (messageId: string) => ({
      messageId,
      attemptNumber: 1,
      startedAt: new Date(),
      durationMs: 50,
      outcome: 'retry' as const,
      responseStatus: 503,
      responseExcerpt: null,
      error: 'HTTP 503',
      messageStatus: 'awaiting_retry' as const,
      nextAttemptAt: future(),
    });
    for (const records of [[record(id)], [record(id), record(await message(STREAM_IN_FLIGHT))]]) {
      await dataSource.query(
        `UPDATE messages SET status = 'fifo_waiting', attempts = 0 WHERE id = $1`,
        [id],
      );
      // The lane's in-flight mark (attempt_started), its transaction still open while the record
      // of the same attempt starts: the record waits for the row, then must see its new state.
      const mark = dataSource.createQueryRunner();
      await mark.connect();
      try {
        await mark.startTransaction();
        await mark.query(`UPDATE messages SET status = 'in_flight' WHERE id = $1`, [id]);
        const recording = messages.recordAttempts(records);
        await pollUntil(
          async () => {
            const [{ n }]: { n: number }[] = await dataSource.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            );
            return n > 0;
          },
          { timeoutMs: 10_000, intervalMs: 20, description: 'the record waiting for the mark' },
        );
        await mark.commitTransaction();
        await recording;
      } finally {
        await mark.release();
      }
      const [counted]: { attempts: number }[] = await dataSource.query(
        'SELECT attempts FROM messages WHERE id = $1',
        [id],
      );
      expect({ ...(await row(id)), ...counted }).toMatchObject({
        status: 'awaiting_retry',
        route: 'lane',
        attempts: 1,
      });
    }
  });

  it('hands a lane back to the schedule when FIFO is turned off', async () => {
    const endpointId = newId('ep');
    const ids: string[] = [];
    for (const [seq, status] of [
      [1, 'in_flight'],
      [2, 'fifo_waiting'],
    ] as const) {
      const id = newId('msg');
      ids.push(id);
      await dataSource.query(
        `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, route,
                               attempts, max_attempts, fifo_seq, created_at, updated_at)
         VALUES ($1, 'org_state', $2, $3, 't', $4, 'lane', 0, 5, $5, now(), now())`,
        // One message per event and endpoint: each queued message has an event of its own.
        [id, newId('evt'), endpointId, status, seq],
      );
    }
    expect(await lanes.handBack(endpointId)).toBe(2);
    for (const id of ids) {
      const handed = await row(id);
      expect(handed).toMatchObject({ status: 'awaiting_retry', route: 'schedule' });
      expect(handed.next_attempt_at).not.toBeNull();
    }
    expect(await lanes.queue(endpointId, 10)).toEqual([]);
  });
});
