import { DataSource } from 'typeorm';
import { newId } from '@hookbase/domain';
import { createDataSource, FifoEpisodeRepository } from '@hookbase/persistence';
import { createTestDatabase, testEnvironment } from '@hookbase/testing';

/**
 * FIFO blocked episodes as PostgreSQL keeps them: the sweep reads a paused FIFO endpoint's lane
 * with its head, and of two sweepers (two connection pools, as two dispatchers) racing to start,
 * report or end the same episode exactly one wins each time.
 */
describe('FIFO blocked episodes in PostgreSQL', () => {
  let database: { url: string; drop: () => Promise<void> };
  let first: DataSource;
  let second: DataSource;
  let a: FifoEpisodeRepository;
  let b: FifoEpisodeRepository;
  const org = newId('org');
  const eventId = newId('evt');

  beforeAll(async () => {
    database = await createTestDatabase(testEnvironment().databaseUrl);
    first = createDataSource({ url: database.url, poolSize: 2 });
    second = createDataSource({ url: database.url, poolSize: 2 });
    await Promise.all([first.initialize(), second.initialize()]);
    a = new FifoEpisodeRepository(first);
    b = new FifoEpisodeRepository(second);
    await first.query(
      `INSERT INTO organizations (id, name, plan, created_at, updated_at)
       VALUES ($1, 'episodes', 'pro', now(), now())`,
      [org],
    );
    await first.query(
      `INSERT INTO events (id, organization_id, event_type, payload, accepted_at, created_at)
       VALUES ($1, $2, 'order.created', '{}', now(), now())`,
      [eventId, org],
    );
  });

  afterAll(async () => {
    await Promise.all([first?.destroy(), second?.destroy()]);
    await database?.drop();
  });

  /** A paused FIFO endpoint with one queued message; returns their ids. */
  async function pausedLane(): Promise<{ endpointId: string; messageId: string }> {
    const endpointId = newId('ep');
    const messageId = newId('msg');
    await first.query(
      `INSERT INTO endpoints (id, organization_id, kind, url, status, fifo_enabled, retry,
                              created_at, updated_at)
       VALUES ($1, $2, 'http', 'http://127.0.0.1:9/x', 'paused', true, '{}', now(), now())`,
      [endpointId, org],
    );
    await first.query(
      `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status, route,
                             attempts, max_attempts, fifo_seq, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'order.created', 'fifo_waiting', 'lane', 0, 5, 1, now(), now())`,
      [messageId, org, eventId, endpointId],
    );
    return { endpointId, messageId };
  }

  it('reads a lane with its endpoint, its head and no episode yet', async () => {
    const { endpointId, messageId } = await pausedLane();
    const lanes = await a.lanes('', 1_000);
    const lane = lanes.find((l) => l.endpointId === endpointId);
    expect(lane).toMatchObject({
      organizationId: org,
      endpointStatus: 'paused',
      deleted: false,
      operational: false,
      head: { messageId, status: 'fifo_waiting', attempts: 0, eventType: 'order.created' },
      lease: null,
      episode: null,
    });
  });

  it('lets one of two sweepers start, report and end an episode', async () => {
    const { endpointId, messageId } = await pausedLane();
    const started = await Promise.all([
      a.start(endpointId, messageId),
      b.start(endpointId, messageId),
    ]);
    expect(started.filter(Boolean)).toHaveLength(1);
    // Not reported before the threshold.
    expect(await a.report(endpointId, messageId, 3_600_000)).toBeNull();
    const reported = await Promise.all([
      a.report(endpointId, messageId, 0),
      b.report(endpointId, messageId, 0),
    ]);
    expect(reported.filter((since) => since !== null)).toHaveLength(1);
    const [lane] = (await a.lanes('', 1_000)).filter((l) => l.endpointId === endpointId);
    expect(lane.episode).toMatchObject({ headId: messageId });
    expect(lane.episode?.reportedAt).toBeInstanceOf(Date);
    const ended = await Promise.all([a.end(endpointId, messageId), b.end(endpointId, messageId)]);
    const winners = ended.filter((episode) => episode !== null);
    expect(winners).toHaveLength(1);
    expect(winners[0]?.reportedAt).toBeInstanceOf(Date);
    // A new episode may begin for the same lane once the old one is over.
    expect(await b.start(endpointId, messageId)).toBe(true);
    // Ending an episode about another head changes nothing.
    expect(await a.end(endpointId, 'msg_other')).toBeNull();
  });

  it('keeps reading a lane whose queue emptied while its episode is open, until it ends', async () => {
    const { endpointId, messageId } = await pausedLane();
    await a.start(endpointId, messageId);
    await first.query(`DELETE FROM messages WHERE id = $1`, [messageId]);
    const lane = (await a.lanes('', 1_000)).find((l) => l.endpointId === endpointId);
    expect(lane).toMatchObject({ head: null, episode: { headId: messageId } });
    await a.end(endpointId, messageId);
    expect((await a.lanes('', 1_000)).some((l) => l.endpointId === endpointId)).toBe(false);
  });
});
