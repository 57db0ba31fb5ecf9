import { OutboxError } from './errors';
import { publish } from './publish';

const event = { eventType: 'order.paid', payload: { orderId: 1 } };

/** A pg-like client that records statements and fails the ones the test names. */
function recordingClient(fail: (text: string) => Error | null = () => null) {
  const statements: string[] = [];
  return {
    statements,
    async query(text: string) {
      statements.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
      const error = fail(text);
      if (error) throw error;
      return { rows: text.startsWith('INSERT') ? [{ id: 'x' }] : [] };
    },
  };
}

const sqlError = (code: string) => Object.assign(new Error(`sql ${code}`), { code });

describe('publish', () => {
  it('writes in a savepoint and releases it', async () => {
    const client = recordingClient();
    const published = await publish(event, { transaction: client });
    expect(published).toMatchObject({ duplicate: false });
    expect(published.idempotencyKey).toBe(published.id);
    expect(client.statements).toEqual([
      'SAVEPOINT hookbase_outbox_publish',
      'INSERT INTO hookbase_outbox',
      'RELEASE SAVEPOINT hookbase_outbox_publish',
    ]);
  });

  it('rolls back to the savepoint on bad input, writing nothing', async () => {
    const client = recordingClient();
    await expect(
      publish({ eventType: '', payload: {} }, { transaction: client }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(client.statements).toEqual([
      'SAVEPOINT hookbase_outbox_publish',
      'ROLLBACK TO SAVEPOINT',
      'RELEASE SAVEPOINT hookbase_outbox_publish',
    ]);
  });

  it.each([
    ['25P01', 'NOT_IN_TRANSACTION'],
    ['25P02', 'TRANSACTION_ABORTED'],
  ])('maps SQLSTATE %s at the savepoint to %s', async (state, code) => {
    const client = recordingClient((text) =>
      text.startsWith('SAVEPOINT') ? sqlError(state) : null,
    );
    await expect(publish(event, { transaction: client })).rejects.toMatchObject({ code });
  });

  it('maps a missing table and other database errors, keeping the SQLSTATE', async () => {
    const missing = recordingClient((text) =>
      text.startsWith('INSERT') ? sqlError('42P01') : null,
    );
    await expect(publish(event, { transaction: missing })).rejects.toMatchObject({
      code: 'OUTBOX_NOT_INSTALLED',
    });
    expect(missing.statements).toContain('ROLLBACK TO SAVEPOINT');
    const other = recordingClient((text) => (text.startsWith('INSERT') ? sqlError('53100') : null));
    await expect(publish(event, { transaction: other })).rejects.toMatchObject({
      code: 'OUTBOX_WRITE_FAILED',
      details: { sqlState: '53100' },
    });
  });

  it('refuses what is not a transaction handle, or a TypeORM one outside a transaction', async () => {
    for (const transaction of [
      undefined,
      null,
      {},
      'BEGIN',
      { transaction: () => undefined, queryRunner: undefined },
      { isTransactionActive: false, manager: {}, query: async () => [] },
    ]) {
      const error = await publish(event, { transaction: transaction as never }).catch((e) => e);
      expect(error).toBeInstanceOf(OutboxError);
      expect(error.code).toBe('NOT_IN_TRANSACTION');
    }
  });
});
