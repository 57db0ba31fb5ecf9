import { Hookbase } from '../client/hookbase';
import { postgresOutbox } from './outbox-writer';

/** A pg client stand-in that records the statements it was given. */
function recordingClient() {
  const statements: string[] = [];
  return {
    statements,
    async query(text: string) {
      statements.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
      return { rows: text.startsWith('INSERT') ? [{ id: 'x' }] : [] };
    },
  };
}

describe('new Hookbase({ outbox: postgresOutbox() }).publish(input, { transaction })', () => {
  const noFetch = (async () => {
    throw new Error('publish into a transaction must not call the API');
  }) as typeof fetch;

  it('writes into the given transaction, in a savepoint, without a request', async () => {
    const hookbase = new Hookbase({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'hb_x',
      fetch: noFetch,
      outbox: postgresOutbox(),
    });
    const client = recordingClient();
    const result = await hookbase.publish(
      { eventType: 'order.paid', payload: { orderId: 1 } },
      { transaction: client },
    );
    expect(result).toEqual({ id: result.id, idempotencyKey: result.id, duplicate: false });
    expect(client.statements).toEqual([
      'SAVEPOINT hookbase_outbox_publish',
      'INSERT INTO hookbase_outbox',
      'RELEASE SAVEPOINT hookbase_outbox_publish',
    ]);
  });

  it("applies the outbox's limits: maxEventBytes", async () => {
    const hookbase = new Hookbase({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'hb_x',
      fetch: noFetch,
      outbox: postgresOutbox({ maxEventBytes: 100 }),
    });
    await expect(
      hookbase.publish(
        { eventType: 'order.paid', payload: { text: 'x'.repeat(200) } },
        { transaction: recordingClient() },
      ),
    ).rejects.toMatchObject({ name: 'OutboxError', code: 'VALIDATION_FAILED' });
  });

  it('refuses a transaction when the client has no outbox', async () => {
    const hookbase = new Hookbase({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'hb_x',
      fetch: noFetch,
    });
    await expect(
      hookbase.publish({ eventType: 'a.b', payload: {} }, { transaction: recordingClient() }),
    ).rejects.toThrow(/needs the client created with an outbox/);
  });
});
