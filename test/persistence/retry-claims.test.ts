import { DataSource } from 'typeorm';
import { createDataSource, MessageRepository } from '@hookbase/persistence';
import { createTestDatabase, testEnvironment } from '@hookbase/testing';

// A claim of retries reads each event's payload once for all its claimed messages, and only while
// the payloads fit the bytes it is given: the others are read when their attempts start.
describe('payloads of a retry claim', () => {
  let database: { url: string; drop: () => Promise<void> };
  let dataSource: DataSource;
  let messages: MessageRepository;

  beforeAll(async () => {
    database = await createTestDatabase(testEnvironment().databaseUrl);
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    messages = new MessageRepository(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** An event whose payload's JSON is `bytes` long, with `count` messages due on the schedule. */
  async function dueEvent(name: string, bytes: number, count: number): Promise<string[]> {
    const eventId = `evt_${name}`;
    const payload = { name, pad: '' };
    payload.pad = 'x'.repeat(bytes - JSON.stringify(payload).length);
    await dataSource.query(
      `INSERT INTO events (id, organization_id, event_type, payload, accepted_at, created_at)
       VALUES ($1, 'org_claims', 't', $2, now(), now())`,
      [eventId, JSON.stringify(payload)],
    );
    const ids = Array.from({ length: count }, (_, n) => `msg_${name}${n}`);
    for (const id of ids) {
      await dataSource.query(
        `INSERT INTO messages (id, organization_id, event_id, endpoint_id, event_type, status,
                               route, attempts, max_attempts, next_attempt_at, created_at,
                               updated_at)
         VALUES ($1, 'org_claims', $2, $3, 't', 'awaiting_retry', 'schedule', 1, 5,
                 now() - interval '1 minute', now(), now())`,
        [id, eventId, `ep_${id}`],
      );
    }
    return ids;
  }

  it("gives each event's messages one payload, while the payloads come to the bytes given", async () => {
    // In the order of their first messages' ids: a, b, c.
    await dueEvent('a', 400, 3);
    await dueEvent('b', 400, 2);
    await dueEvent('c', 400, 1);
    const { messages: claimed } = await messages.claimForRetry(100, 60_000, 1_000);
    const byEvent = (eventId: string) => claimed.filter((m) => m.eventId === eventId);
    expect(claimed).toHaveLength(6);
    for (const [eventId, count] of [
      ['evt_a', 3],
      ['evt_b', 2],
    ] as const) {
      const ofEvent = byEvent(eventId);
      expect(ofEvent).toHaveLength(count);
      expect(JSON.stringify(ofEvent[0].payload)).toHaveLength(400);
      // One object for all of them, read once.
      for (const message of ofEvent) expect(message.payload).toBe(ofEvent[0].payload);
    }
    // 1,200 bytes with the third event's: it comes without, as every other column has it.
    expect(byEvent('evt_c')).toEqual([
      expect.objectContaining({ messageId: 'msg_c0', payload: undefined, attempts: 1 }),
    ]);
  });

  it('reads every payload without a bound, and none with a bound of 0', async () => {
    await dueEvent('d', 400, 2);
    await dueEvent('e', 400, 1);
    const all = (await messages.claimForRetry(100, 60_000)).messages;
    expect(all.map((m) => [m.messageId, JSON.stringify(m.payload).length]).sort()).toEqual([
      ['msg_d0', 400],
      ['msg_d1', 400],
      ['msg_e0', 400],
    ]);
    await dueEvent('f', 30, 2);
    const none = (await messages.claimForRetry(100, 60_000, 0)).messages;
    expect(none.map((m) => [m.messageId, m.payload]).sort()).toEqual([
      ['msg_f0', undefined],
      ['msg_f1', undefined],
    ]);
  });
});
