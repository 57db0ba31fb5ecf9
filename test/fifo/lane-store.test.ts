import { DataSource } from 'typeorm';
import { newId } from '@hookbase/domain';
import { createDataSource, FifoLaneRepository } from '@hookbase/persistence';
import { createTestDatabase, testEnvironment } from '@hookbase/testing';

// The lane store's statements for many lanes at once (ADR 9): each lane gets the answer a
// statement of its own would give it.
describe('FIFO lane statements for many lanes', () => {
  let database: { url: string; drop: () => Promise<void> };
  let dataSource: DataSource;
  let lanes: FifoLaneRepository;
  const organizationId = newId('org');
  const ME = 'me';
  const LEASE_MS = 60_000;

  beforeAll(async () => {
    database = await createTestDatabase(testEnvironment().databaseUrl);
    dataSource = createDataSource({ url: database.url, poolSize: 3 });
    await dataSource.initialize();
    lanes = new FifoLaneRepository(dataSource);
    await dataSource.query(
      `INSERT INTO organizations (id, name, plan, created_at, updated_at)
       VALUES ($1, 'lanes', 'pro', now(), now())`,
      [organizationId],
    );
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /**
   * A message queued in `endpointId`'s lane at `seq`, with an event of its own whose payload is
   * `{ seq }`, or `{ seq, pad }` to make its JSON `bytes` long.
   */
  async function queued(
    endpointId: string,
    seq: number,
    status = 'fifo_waiting',
    bytes?: number,
  ): Promise<string> {
    const id = newId('msg');
    const eventId = newId('evt');
    const bare = JSON.stringify({ seq, pad: '' }).length;
    const payload = bytes === undefined ? { seq } : { seq, pad: 'x'.repeat(bytes - bare) };
    expect(bytes === undefined || JSON.stringify(payload).length === bytes).toBe(true);
    await dataSource.query(
      `INSERT INTO events (id, organization_id, event_type, payload, accepted_at, created_at)
       VALUES ($1, $2, 't', $3, now(), now())`,
      [eventId, organizationId, JSON.stringify(payload)],
    );
    await dataSource.query(
      `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, route,
                             attempts, max_attempts, fifo_seq, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 't', $5, 'lane', 0, 5, $6, now(), now())`,
      [id, organizationId, eventId, endpointId, status, seq],
    );
    return id;
  }

  async function lease(endpointId: string, owner: string | null, untilMs: number | null) {
    await dataSource.query(
      `INSERT INTO fifo_lanes (endpoint_id, owner, lease_until, renewed_at)
       VALUES ($1, $2, CASE WHEN $3::float8 IS NULL THEN NULL
                            ELSE now() + make_interval(secs => $3::float8 / 1000) END, now())`,
      [endpointId, owner, untilMs],
    );
  }

  async function ownerOf(endpointId: string): Promise<string | null | undefined> {
    const rows: { owner: string | null }[] = await dataSource.query(
      'SELECT owner FROM fifo_lanes WHERE endpoint_id = $1',
      [endpointId],
    );
    return rows[0]?.owner;
  }

  it('takes every lane no other owner holds a running lease of, in one statement', async () => {
    const [fresh, free, mine, expired, held] = ['a', 'b', 'c', 'd', 'e'].map(() => newId('ep'));
    await lease(free, null, null);
    await lease(mine, ME, LEASE_MS);
    await lease(expired, 'other', -1_000);
    await lease(held, 'other', LEASE_MS);
    const taken = await lanes.acquireMany([fresh, free, mine, expired, held, fresh], ME, LEASE_MS);
    expect([...taken].sort()).toEqual([fresh, free, mine, expired].sort());
    for (const id of [fresh, free, mine, expired]) expect(await ownerOf(id)).toBe(ME);
    expect(await ownerOf(held)).toBe('other');
  });

  it("reads each lane's queue head first, at most `limit` of each, none of a lane with nothing queued", async () => {
    const [long, short, empty] = ['a', 'b', 'c'].map(() => newId('ep'));
    const third = await queued(long, 30);
    const first = await queued(long, 10, 'awaiting_retry');
    const second = await queued(long, 20);
    const only = await queued(short, 7);
    const queues = await lanes.queues([long, short, empty, short], 2);
    expect([...queues.keys()].sort()).toEqual([long, short].sort());
    expect(queues.get(long)!.messages.map((m) => m.messageId)).toEqual([first, second]);
    expect(queues.get(long)!.messages[0]).toMatchObject({
      status: 'awaiting_retry',
      plan: 'pro',
      payload: { seq: 10 },
      endpointId: long,
    });
    expect(queues.get(long)!.whole).toBe(false);
    expect(queues.get(short)!.messages.map((m) => m.messageId)).toEqual([only]);
    expect(queues.get(short)!.whole).toBe(true);
    // The same as each lane's own read.
    expect(await lanes.queue(long, 2)).toEqual(queues.get(long)!.messages);
    expect((await lanes.queue(long, 5)).map((m) => m.messageId)).toEqual([first, second, third]);
  });

  it('reads a window only while its payloads come to at most the bytes given, its head always, without a payload larger than that', async () => {
    const [large, exact, huge, small] = ['a', 'b', 'c', 'd'].map(() => newId('ep'));
    const ids = [];
    for (let seq = 1; seq <= 4; seq++) ids.push(await queued(large, seq, 'fifo_waiting', 400));
    const exactHead = await queued(exact, 1, 'fifo_waiting', 1_000);
    await queued(exact, 2, 'fifo_waiting', 20);
    const hugeHead = await queued(huge, 1, 'fifo_waiting', 5_000);
    await queued(huge, 2, 'fifo_waiting', 20);
    const smallIds = [await queued(small, 1), await queued(small, 2)];
    const queues = await lanes.queues([large, exact, huge, small], 10, 1_000);
    // 400 and 800 bytes with the first two; 1,200 with the third.
    expect(queues.get(large)!.messages.map((m) => m.messageId)).toEqual(ids.slice(0, 2));
    expect(queues.get(large)!.messages.every((m) => JSON.stringify(m.payload).length === 400)).toBe(
      true,
    );
    expect(queues.get(large)!.whole).toBe(false);
    // A head of exactly the bound comes with its payload, and alone.
    expect(queues.get(exact)!.messages.map((m) => m.messageId)).toEqual([exactHead]);
    expect(JSON.stringify(queues.get(exact)!.messages[0].payload)).toHaveLength(1_000);
    expect(queues.get(exact)!.whole).toBe(false);
    // A larger head comes all the same, alone and without its payload (read when it is sent).
    expect(queues.get(huge)!.messages).toEqual([
      expect.objectContaining({ messageId: hugeHead, payload: undefined, eventType: 't' }),
    ]);
    expect(queues.get(huge)!.whole).toBe(false);
    expect(queues.get(small)).toEqual({
      messages: [
        expect.objectContaining({ messageId: smallIds[0], payload: { seq: 1 } }),
        expect.objectContaining({ messageId: smallIds[1], payload: { seq: 2 } }),
      ],
      whole: true,
    });
    // At the limit of messages, the window is not the whole queue even when nothing was cut.
    expect((await lanes.queues([small], 2, 1_000)).get(small)!.whole).toBe(false);
    // With 1 byte (many lanes sharing little out), each lane reads its head alone, without its
    // payload.
    const heads = await lanes.queues([large, exact, huge, small], 10, 1);
    expect(
      [large, exact, huge, small].map((id) =>
        heads.get(id)!.messages.map((m) => [m.messageId, m.payload]),
      ),
    ).toEqual([
      [[ids[0], undefined]],
      [[exactHead, undefined]],
      [[hugeHead, undefined]],
      [[smallIds[0], undefined]],
    ]);
  });

  it('gives up only the lanes it holds whose queue is empty', async () => {
    const [drained, busy, others] = ['a', 'b', 'c'].map(() => newId('ep'));
    await lease(drained, ME, LEASE_MS);
    await lease(busy, ME, LEASE_MS);
    await lease(others, 'other', LEASE_MS);
    await queued(busy, 1);
    const released = await lanes.releaseManyIfEmpty([drained, busy, others], ME);
    expect([...released]).toEqual([drained]);
    expect(await ownerOf(drained)).toBeNull();
    expect(await ownerOf(busy)).toBe(ME);
    expect(await ownerOf(others)).toBe('other');
  });

  it("hands back at a stop every lane it holds but the ones still sending, and no other owner's", async () => {
    const me = `${ME}-stopping`;
    const [idle, expired, sending, others] = ['a', 'b', 'c', 'd'].map(() => newId('ep'));
    await lease(idle, me, LEASE_MS);
    // A lease of its own that ran out and no one took yet is its own still.
    await lease(expired, me, -1_000);
    await lease(sending, me, LEASE_MS);
    await lease(others, 'other', LEASE_MS);
    const handedBack = await lanes.releaseAllExcept(me, [sending]);
    expect(handedBack.sort()).toEqual([idle, expired].sort());
    expect(await ownerOf(idle)).toBeNull();
    expect(await ownerOf(expired)).toBeNull();
    expect(await ownerOf(sending)).toBe(me);
    expect(await ownerOf(others)).toBe('other');
    // Nothing kept: every lane it holds.
    expect(await lanes.releaseAllExcept(me, [])).toEqual([sending]);
    expect(await lanes.releaseAllExcept(me, [])).toEqual([]);
  });

  it('marks many heads in flight, each only if its attempt was not recorded first', async () => {
    const endpointId = newId('ep');
    const current = await queued(endpointId, 1);
    const recorded = await queued(newId('ep'), 1);
    await dataSource.query(`UPDATE messages SET attempts = 1 WHERE id = $1`, [recorded]);
    const report = await lanes.startHeadAttempts([
      { messageId: current, attemptsBefore: 0 },
      { messageId: recorded, attemptsBefore: 0 },
    ]);
    expect(report.transitioned).toEqual([current]);
    expect(report.skipped.map((s) => s.messageId)).toEqual([recorded]);
    const rows: { id: string; status: string }[] = await dataSource.query(
      'SELECT id, status FROM messages WHERE id = ANY($1)',
      [[current, recorded]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.id, r.status]))).toEqual({
      [current]: 'in_flight',
      [recorded]: 'fifo_waiting',
    });
  });
});
