import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { pollUntil, TcpProxy } from '@hookbase/testing';
import {
  EventSender,
  OutboxEvent,
  OutboxRelay,
  publish,
  RelayLogEntry,
  SendOutcome,
} from '../../libs/sdk/src/outbox';
import { createProducerDatabase } from './producer-database';

const SCHEMA = readFileSync(
  join(
    __dirname,
    '..',
    '..',
    'libs',
    'sdk',
    'src',
    'outbox',
    'migrations',
    '0001_hookbase_outbox.sql',
  ),
  'utf8',
);

/** A Hookbase stand-in that answers as the test says and records what it was sent. */
class ScriptedSender implements EventSender {
  readonly sent: string[] = [];
  constructor(private readonly answer: (event: OutboxEvent, n: number) => SendOutcome) {}
  async send(event: OutboxEvent): Promise<SendOutcome> {
    const label = String(event.payload.label);
    this.sent.push(label);
    return this.answer(event, this.sent.length);
  }
}

const accepted: SendOutcome = { kind: 'accepted', eventId: null, duplicate: false };

/**
 * The relay's handling of each answer and of its own database, against real PostgreSQL: what the
 * outbox says after a refusal, a retry with Retry-After, and a lost database connection.
 */
describe('outbox relay: answers and database trouble', () => {
  let producer: { url: string; drop: () => Promise<void> };
  let pool: Pool;

  const commit = async (labels: string[]) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const label of labels) {
        await publish({ eventType: 'relay.test', payload: { label } }, { transaction: client });
      }
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  };
  const rows = async () =>
    (
      await pool.query<{
        label: string;
        sent: boolean;
        failed: boolean;
        last_error: string | null;
      }>(
        `SELECT payload->>'label' AS label, sent_at IS NOT NULL AS sent,
                failed_at IS NOT NULL AS failed, last_error
           FROM hookbase_outbox ORDER BY position`,
      )
    ).rows;

  beforeEach(async () => {
    producer = await createProducerDatabase();
    pool = new Pool({ connectionString: producer.url, max: 4 });
    // pool.end() resolves before its idle connections have closed; dropping the database then
    // ends them from the server side, which an idle client reports as an error event.
    pool.on('error', () => undefined);
    await pool.query(SCHEMA);
  });

  afterEach(async () => {
    await pool.end();
    await producer.drop();
  });

  it('marks an event Hookbase refuses for good as failed, with the reason, and goes on', async () => {
    await commit(['a', 'refused', 'c']);
    const sender = new ScriptedSender((event) =>
      event.payload.label === 'refused'
        ? { kind: 'rejected', status: 409, code: 'IDEMPOTENCY_CONFLICT', message: 'taken' }
        : accepted,
    );
    const relay = new OutboxRelay({ database: producer.url, sender, log: () => undefined });
    try {
      expect(await relay.drainOnce()).toEqual({ kind: 'progress', sent: 2, rejected: 1 });
      expect(await relay.drainOnce()).toEqual({ kind: 'idle' });
    } finally {
      await relay.stop();
    }
    expect(sender.sent).toEqual(['a', 'refused', 'c']);
    expect(await rows()).toEqual([
      { label: 'a', sent: true, failed: false, last_error: null },
      {
        label: 'refused',
        sent: false,
        failed: true,
        last_error: '409 IDEMPOTENCY_CONFLICT: taken',
      },
      { label: 'c', sent: true, failed: false, last_error: null },
    ]);
    // Nothing is left to number: finished transactions are forgotten.
    expect(
      (await pool.query('SELECT count(*)::int AS n FROM hookbase_outbox_commits')).rows,
    ).toEqual([{ n: 0 }]);
  });

  it('retries the head and sends nothing after it while Hookbase asks to wait', async () => {
    await commit(['head', 'next']);
    const sender = new ScriptedSender((_, n) =>
      n <= 2 ? { kind: 'retry', reason: '503 SERVICE_UNAVAILABLE', retryAfterMs: 1500 } : accepted,
    );
    const relay = new OutboxRelay({
      database: producer.url,
      sender,
      backoff: { baseMs: 100, maxMs: 5000, growth: 'doubling' },
      log: () => undefined,
    });
    try {
      // Retry-After (1.5 s) is longer than the backoff (100 ms, then 200 ms): it wins.
      expect(await relay.drainOnce()).toMatchObject({ kind: 'retry', sent: 0, delayMs: 1500 });
      expect(await relay.drainOnce()).toMatchObject({ kind: 'retry', sent: 0, delayMs: 1500 });
      expect(await relay.drainOnce()).toEqual({ kind: 'progress', sent: 2, rejected: 0 });
    } finally {
      await relay.stop();
    }
    expect(sender.sent).toEqual(['head', 'head', 'head', 'next']);
    expect((await rows()).every((row) => row.sent)).toBe(true);
  });

  it('reconnects after losing its database and relays what was committed meanwhile', async () => {
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(producer.url).port));
    const port = await proxy.start();
    const viaProxy = new URL(producer.url);
    viaProxy.port = String(port);
    const sender = new ScriptedSender(() => accepted);
    const errors: RelayLogEntry[] = [];
    const relay = new OutboxRelay({
      database: viaProxy.toString(),
      sender,
      idleMs: 100,
      backoff: { baseMs: 100, maxMs: 400, growth: 'doubling' },
      log: (entry) => {
        if (entry.level === 'error') errors.push(entry);
      },
    });
    relay.start();
    try {
      await commit(['before']);
      await pollUntil(() => sender.sent.includes('before'), {
        description: 'the first event sent',
      });
      await proxy.cut();
      await commit(['during-1', 'during-2']);
      await pollUntil(() => errors.length >= 2, {
        timeoutMs: 10_000,
        description: 'the relay failing to reach its database',
      });
      expect(relay.active).toBe(false);
      expect(sender.sent).toEqual(['before']);
      await proxy.restore();
      await pollUntil(async () => (await rows()).every((row) => row.sent), {
        timeoutMs: 15_000,
        description: 'every row sent after the database came back',
      });
      expect(sender.sent).toEqual(['before', 'during-1', 'during-2']);
      expect(relay.active).toBe(true);
    } finally {
      await relay.stop();
      await proxy.stop();
    }
  });
});
