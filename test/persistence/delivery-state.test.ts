import { DataSource } from 'typeorm';
import { newId } from '@hookbase/domain';
import { createDataSource, MessageRepository, FifoLaneRepository } from '@hookbase/persistence';
import { HookbaseMetrics } from '@hookbase/runtime';
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

  /**
   * Runs `write` while another transaction has changed a row (`change`) and not yet committed:
   * the write waits for the row, the change commits, and the write goes on with its new version.
   */
  async function whileChanging<T>(
    change: string,
    parameters: unknown[],
    write: () => Promise<T>,
  ): Promise<T> {
    const other = dataSource.createQueryRunner();
    await other.connect();
    try {
      await other.startTransaction();
      await other.query(change, parameters);
      const writing = write();
      await pollUntil(
        async () => {
          const [{ n }]: { n: number }[] = await dataSource.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return n > 0;
        },
        { timeoutMs: 10_000, intervalMs: 20, description: 'the write waiting for the change' },
      );
      await other.commitTransaction();
      return await writing;
    } finally {
      await other.release();
    }
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

  it('holds each message until its own time in one write, and leaves a finished one alone', async () => {
    const pending = await message({ status: 'pending', route: 'stream' });
    const claimed = await message({ status: 'in_flight', route: 'schedule' });
    const done = await message({ status: 'succeeded', route: 'final' });
    const soon = new Date(Date.now() + 1_000);
    const later = future();
    const report = await messages.holdEach([
      { messageId: pending, until: soon },
      { messageId: claimed, until: later },
      { messageId: done, until: soon },
    ]);
    expect(report.transitioned.sort()).toEqual([pending, claimed].sort());
    expect(await row(pending)).toMatchObject({
      status: 'awaiting_retry',
      route: 'schedule',
      next_attempt_at: soon,
    });
    expect(await row(claimed)).toMatchObject({
      status: 'awaiting_retry',
      route: 'schedule',
      next_attempt_at: later,
      claim_until: null,
    });
    expect(await row(done)).toMatchObject({ status: 'succeeded', route: 'final' });
    expect(await messages.holdEach([])).toEqual({ transitioned: [], skipped: [] });
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
    const { messages: claimed } = await messages.claimForRetry(100, 60_000);
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
    expect((await messages.claimForRetry(100, leaseMs)).transitioned).toContain(id);
    await messages.claimForAttempt([id]);
    // The attempt never gets recorded; once the lease has passed, the schedule takes it again.
    const deadline = Date.now() + 10_000;
    let again: string[] = [];
    while (!again.includes(id) && Date.now() < deadline) {
      await new Promise((resolve) => setImmediate(resolve));
      again = (await messages.claimForRetry(100, 60_000)).transitioned;
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

  it('records a stream attempt from pending, and shows one in flight only while it is still under way', async () => {
    const record = (messageId: string, messageStatus: 'succeeded' | 'awaiting_retry') => ({
      messageId,
      attemptNumber: 1,
      startedAt: new Date(),
      durationMs: 5,
      outcome: messageStatus === 'succeeded' ? ('succeeded' as const) : ('retry' as const),
      responseStatus: messageStatus === 'succeeded' ? 200 : 503,
      responseExcerpt: null,
      error: messageStatus === 'succeeded' ? null : 'HTTP 503',
      messageStatus,
      nextAttemptAt: messageStatus === 'succeeded' ? null : future(),
    });
    // Quick attempts: recorded straight from pending, one alone and two together.
    const quick = await message({ status: 'pending', route: 'stream' });
    const quickFailed = await message({ status: 'pending', route: 'stream' });
    const quickToo = await message({ status: 'pending', route: 'stream' });
    await messages.recordAttempts([record(quick, 'succeeded')]);
    await messages.recordAttempts([
      record(quickFailed, 'awaiting_retry'),
      record(quickToo, 'succeeded'),
    ]);
    expect(await row(quick)).toMatchObject({ status: 'succeeded', route: 'final' });
    expect(await row(quickFailed)).toMatchObject({ status: 'awaiting_retry', route: 'schedule' });
    expect(await row(quickToo)).toMatchObject({ status: 'succeeded', route: 'final' });

    // A slow one is shown in flight; a mark that arrives after the record, or for a message that
    // made another attempt meanwhile or left the stream, changes nothing.
    const slow = await message({ status: 'pending', route: 'stream' });
    const shown = await messages.showStreamAttemptsStarted([
      { messageId: slow, attemptsBefore: 0 },
      { messageId: quick, attemptsBefore: 0 },
      { messageId: quickFailed, attemptsBefore: 0 },
    ]);
    expect(shown.transitioned).toEqual([slow]);
    expect(shown.skipped.map((s) => s.messageId).sort()).toEqual([quick, quickFailed].sort());
    expect(await row(slow)).toMatchObject({ status: 'in_flight', route: 'stream' });
    expect(await row(quickFailed)).toMatchObject({ status: 'awaiting_retry', route: 'schedule' });
    await dataSource.query(`UPDATE messages SET attempts = 1, status = 'pending' WHERE id = $1`, [
      slow,
    ]);
    expect(
      (await messages.showStreamAttemptsStarted([{ messageId: slow, attemptsBefore: 0 }]))
        .transitioned,
    ).toEqual([]);
    expect(await row(slow)).toMatchObject({ status: 'pending', route: 'stream' });
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
      await whileChanging(`UPDATE messages SET status = 'in_flight' WHERE id = $1`, [id], () =>
        messages.recordAttempts(records),
      );
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

  it('locks the rows of a batched record or head start by id, whatever order they come in', async () => {
    // Batched writes that meet the same rows must lock them in one order, or two of them
    // deadlock. With the first row (by id) held elsewhere, a batch given the rows in reverse
    // order must wait for it before locking the second one.
    const attempt = (messageId: string) => ({
      messageId,
      attemptNumber: 1,
      startedAt: new Date(),
      durationMs: 5,
      outcome: 'succeeded' as const,
      responseStatus: 200,
      responseExcerpt: null,
      error: null,
      messageStatus: 'succeeded' as const,
      nextAttemptAt: null,
    });
    const writes: [string, (ids: string[]) => Promise<unknown>][] = [
      ['recordAttempts', (ids) => messages.recordAttempts(ids.map(attempt))],
      [
        'startHeadAttempts',
        (ids) =>
          lanes.startHeadAttempts(ids.map((messageId) => ({ messageId, attemptsBefore: 0 }))),
      ],
    ];
    for (const [name, write] of writes) {
      const ids: string[] = [];
      for (let seq = 1; seq <= 2; seq++)
        ids.push(await message({ status: 'fifo_waiting', route: 'lane' }, { fifoSeq: seq }));
      const [first, second] = [...ids].sort();
      // The first row's new version lies after the second on disk, so a plan that scans the
      // table meets the second row first too.
      await dataSource.query('UPDATE messages SET updated_at = now() WHERE id = $1', [first]);
      const holder = dataSource.createQueryRunner();
      const prober = dataSource.createQueryRunner();
      await holder.connect();
      await prober.connect();
      try {
        await holder.startTransaction();
        await holder.query('SELECT id FROM messages WHERE id = $1 FOR UPDATE', [first]);
        const writing = write([second, first]);
        await pollUntil(
          async () => {
            // On the prober's connection: the pool has three, all in use here.
            const [{ n }]: { n: number }[] = await prober.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            );
            return n > 0;
          },
          { timeoutMs: 10_000, intervalMs: 20, description: `${name} waiting for the first row` },
        );
        // While it waits for the first row it holds nothing after it.
        await prober.startTransaction();
        await expect(
          prober.query('SELECT id FROM messages WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [second]),
        ).resolves.toHaveLength(1);
        await prober.rollbackTransaction();
        await holder.commitTransaction();
        await writing;
        expect((await row(second)).route).not.toBe('stream');
      } finally {
        await holder.release();
        await prober.release();
      }
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
    const handed = await lanes.handBack(endpointId);
    expect([...handed.transitioned].sort()).toEqual([...ids].sort());
    expect(handed.skipped).toEqual([]);
    expect((await lanes.handBack(endpointId)).transitioned).toEqual([]);
    for (const id of ids) {
      const handed = await row(id);
      expect(handed).toMatchObject({ status: 'awaiting_retry', route: 'schedule' });
      expect(handed.next_attempt_at).not.toBeNull();
    }
    expect(await lanes.queue(endpointId, 10)).toEqual([]);
  });

  describe('a write that waits for a row another transaction moves on', () => {
    // Each write below waits for a row whose state another transaction changes to another state
    // the write's event also leaves: it must apply to the new state, not vanish.
    it('holds a message that went in flight meanwhile', async () => {
      const id = await message({ status: 'pending', route: 'stream' });
      const until = future();
      const report = await whileChanging(
        `UPDATE messages SET status = 'in_flight' WHERE id = $1`,
        [id],
        () => messages.hold([id], until),
      );
      expect(report).toEqual({ transitioned: [id], skipped: [] });
      expect(await row(id)).toMatchObject({
        status: 'awaiting_retry',
        route: 'schedule',
        next_attempt_at: until,
      });
    });

    it("cancels a lane's head that went in flight meanwhile", async () => {
      const id = await message({ status: 'fifo_waiting', route: 'lane' }, { fifoSeq: 7 });
      const report = await whileChanging(
        `UPDATE messages SET status = 'in_flight' WHERE id = $1`,
        [id],
        () => messages.cancel([id]),
      );
      expect(report).toEqual({ transitioned: [id], skipped: [] });
      const cancelled = await row(id);
      expect(cancelled).toMatchObject({ status: 'cancelled', route: 'final' });
      expect(cancelled.finished_at).not.toBeNull();
    });

    it('hands back a lane whose head went in flight meanwhile', async () => {
      const endpointId = newId('ep');
      const id = newId('msg');
      await dataSource.query(
        `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, route,
                               attempts, max_attempts, fifo_seq, created_at, updated_at)
         VALUES ($1, 'org_state', $2, $3, 't', 'fifo_waiting', 'lane', 0, 5, 1, now(), now())`,
        [id, newId('evt'), endpointId],
      );
      const report = await whileChanging(
        `UPDATE messages SET status = 'in_flight' WHERE id = $1`,
        [id],
        () => lanes.handBack(endpointId),
      );
      expect(report).toEqual({ transitioned: [id], skipped: [] });
      expect(await row(id)).toMatchObject({ status: 'awaiting_retry', route: 'schedule' });
    });

    it('reports a message whose new state the event does not leave as skipped, and why', async () => {
      const id = await message({ status: 'in_flight', route: 'stream' });
      const other = await message({ status: 'pending', route: 'stream' });
      const gone = newId('msg');
      const metrics = new HookbaseMetrics({ endpointLabels: false, processMetrics: false });
      const counting = new MessageRepository(dataSource, metrics);
      const report = await whileChanging(
        `UPDATE messages SET status = 'succeeded', route = 'final', finished_at = now()
          WHERE id = $1`,
        [id],
        () => counting.expire([id, other, gone]),
      );
      expect(report).toEqual({
        transitioned: [other],
        skipped: [
          {
            messageId: id,
            event: 'expired',
            reason: 'state_not_allowed',
            found: { status: 'succeeded', route: 'final' },
          },
          { messageId: gone, event: 'expired', reason: 'not_found', found: null },
        ],
      });
      expect(await row(id)).toMatchObject({ status: 'succeeded', route: 'final' });
      expect(await row(other)).toMatchObject({ status: 'expired', route: 'final' });
      const { text } = await metrics.scrape();
      for (const reason of ['state_not_allowed', 'not_found']) {
        expect(text).toContain(
          `hookbase_delivery_transitions_skipped_total{transition="expired",reason="${reason}"} 1`,
        );
      }
    });

    it("reports a lane head's late in-flight mark, after its attempt was recorded, as skipped", async () => {
      const id = await message({ status: 'fifo_waiting', route: 'lane' }, { fifoSeq: 9 });
      const report = await whileChanging(
        `UPDATE messages SET status = 'awaiting_retry', attempts = 1, next_attempt_at = now()
          WHERE id = $1`,
        [id],
        () => lanes.startHeadAttempt(id, 0),
      );
      expect(report).toEqual({
        transitioned: [],
        skipped: [
          {
            messageId: id,
            event: 'attempt_started',
            reason: 'condition_unmet',
            found: { status: 'awaiting_retry', route: 'lane' },
          },
        ],
      });
      expect(await row(id)).toMatchObject({ status: 'awaiting_retry', route: 'lane' });
    });
  });
});
