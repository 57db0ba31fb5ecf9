import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import {
  ApiClient,
  createTenant,
  HookbaseProcess,
  pollUntil,
  RunningStack,
  startStack,
  TcpProxy,
  TestReceiver,
} from '@hookbase/testing';
import { Hookbase } from '@hookbase/sdk';
import {
  HookbaseEventSender,
  HookbaseOutbox1796169600000,
  OutboxError,
  OutboxRelay,
  postgresOutbox,
  publish,
  RelayLogEntry,
} from '../../libs/sdk/src/outbox';
import { createProducerDatabase } from './producer-database';

const ROOT = join(__dirname, '..', '..');
/** The relay as a command: `hookbase outbox-relay`, the CLI built by `npm run build`. */
const CLI = join(ROOT, 'apps', 'cli', 'bin', 'hookbase.js');
const SCHEMA = readFileSync(
  join(ROOT, 'libs', 'sdk', 'src', 'outbox', 'migrations', '0001_hookbase_outbox.sql'),
  'utf8',
);

/**
 * publish(input, { transaction }) and the outbox relay against real PostgreSQL (a producer
 * database of the test's own) and the real Hookbase stack, delivering to a FIFO endpoint: what a
 * producer relies on when it publishes inside its own transaction.
 */
describe('outbox: publish inside the producer transaction, relayed to Hookbase', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let apiKey: string;
  let client: ApiClient;
  let org: string;
  let producer: { url: string; drop: () => Promise<void> };
  let pool: Pool;
  let relay: OutboxRelay | null = null;
  const children: HookbaseProcess[] = [];

  /** The relay's sender on the SDK client; its retries kept short so the relay's backoff shows. */
  const sdkSender = (baseUrl: string) =>
    new HookbaseEventSender(new Hookbase({ baseUrl, apiKey }), {
      retry: { maxAttempts: 2, maxElapsedMs: 1000 },
    });

  const startRelay = (baseUrl = stack.url, log?: (entry: RelayLogEntry) => void) => {
    const started = new OutboxRelay({
      database: producer.url,
      sender: sdkSender(baseUrl),
      idleMs: 200,
      standbyMs: 200,
      backoff: { baseMs: 100, maxMs: 1000, growth: 'doubling' },
      ...(log ? { log } : {}),
    });
    started.start();
    return started;
  };

  /** Runs `work` in a transaction on its own connection and commits. */
  async function inTransaction<T>(work: (tx: PoolClient) => Promise<T>): Promise<T> {
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      const result = await work(tx);
      await tx.query('COMMIT');
      return result;
    } catch (error) {
      await tx.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      tx.release();
    }
  }

  /** The labels the FIFO endpoint received, each message once, in the order first seen. */
  function receivedLabels(): string[] {
    const seen = new Set<string>();
    const labels: string[] = [];
    for (const request of receiver.requests) {
      const id = String(request.headers['webhook-id']);
      if (request.path !== '/ordered' || seen.has(id)) continue;
      seen.add(id);
      labels.push((JSON.parse(request.body) as { label: string }).label);
    }
    return labels;
  }

  /** Waits until the endpoint received every label given (fails with what it saw). */
  const waitForLabels = (labels: string[], timeoutMs = 30_000) =>
    pollUntil(() => labels.every((label) => receivedLabels().includes(label)), {
      timeoutMs,
      description: `deliveries of ${labels.join(', ')}`,
    });

  /** How many events of this type Hookbase holds for the organization. */
  async function eventsAtHookbase(eventType: string): Promise<number> {
    const response = await client.get(`${org}/messages?eventType=${eventType}&limit=250`);
    expect(response.status).toBe(200);
    return new Set((response.body.data as { eventId: string }[]).map((m) => m.eventId)).size;
  }

  async function outboxRows(): Promise<
    { label: string; sent: boolean; event_id: string | null; failed: boolean }[]
  > {
    const { rows } = await pool.query(
      `SELECT payload->>'label' AS label, sent_at IS NOT NULL AS sent, event_id,
              failed_at IS NOT NULL AS failed
         FROM hookbase_outbox ORDER BY position`,
    );
    return rows;
  }

  /** A last event, published after the others: once delivered, FIFO says all before it were. */
  async function publishMarker(label: string): Promise<void> {
    await inTransaction((tx) =>
      publish({ eventType: 'outbox.marker', payload: { label } }, { transaction: tx }),
    );
    await waitForLabels([label]);
  }

  beforeAll(async () => {
    const receiverUrl = await receiver.start();
    stack = await startStack({ HOOKBASE_RETRY_POLL_MS: '100' });
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    apiKey = tenant.apiKey;
    client = tenant.client;
    org = `/api/organizations/${tenant.organizationId}`;
    const endpoint = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/ordered`,
      fifoEnabled: true,
    });
    expect(endpoint.status).toBe(201);

    producer = await createProducerDatabase();
    pool = new Pool({ connectionString: producer.url, max: 12 });
    // pool.end() resolves before its idle connections have closed; dropping the database then
    // ends them from the server side, which an idle client reports as an error event.
    pool.on('error', () => undefined);
    // The plain SQL migration, as a pg user runs it, beside the producer's own table.
    await pool.query(SCHEMA);
    await pool.query('CREATE TABLE orders (id int PRIMARY KEY, note text)');
    relay = startRelay();
  });

  afterAll(async () => {
    await relay?.stop();
    for (const child of children) await child.kill();
    await pool?.end();
    await producer?.drop();
    await stack?.stop();
    await receiver.stop();
  });

  it('publishes nothing for a rolled-back transaction', async () => {
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      await tx.query(`INSERT INTO orders VALUES (1, 'rolled back')`);
      await publish(
        { eventType: 'outbox.rollback', payload: { label: 'rolled-back' } },
        { transaction: tx },
      );
      await tx.query('ROLLBACK');
    } finally {
      tx.release();
    }
    await publishMarker('after-rollback');
    expect(receivedLabels()).not.toContain('rolled-back');
    expect(await eventsAtHookbase('outbox.rollback')).toBe(0);
    expect((await outboxRows()).map((row) => row.label)).not.toContain('rolled-back');
  });

  /** The SDK client with the outbox as its writer: `publish(input, { transaction })`. */
  const sdkClient = () => new Hookbase({ baseUrl: stack.url, apiKey, outbox: postgresOutbox() });

  it('publishes a committed transaction exactly once and marks its row sent', async () => {
    const published = await inTransaction(async (tx) => {
      await tx.query(`INSERT INTO orders VALUES (2, 'committed')`);
      return sdkClient().publish(
        { eventType: 'outbox.commit', payload: { label: 'committed' } },
        { transaction: tx },
      );
    });
    expect(published).toMatchObject({ duplicate: false, idempotencyKey: published.id });
    await waitForLabels(['committed']);
    await pollUntil(
      async () => (await outboxRows()).find((row) => row.label === 'committed')?.sent,
      { description: 'the committed row marked sent' },
    );
    await publishMarker('after-commit');
    expect(receivedLabels().filter((label) => label === 'committed')).toHaveLength(1);
    expect(await eventsAtHookbase('outbox.commit')).toBe(1);
  });

  it('keeps the transaction usable when a publish fails: the commit carries the other writes', async () => {
    const failures: OutboxError[] = [];
    const capture = async (attempt: Promise<unknown>) => {
      const error = await attempt.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OutboxError);
      failures.push(error as OutboxError);
    };
    await inTransaction(async (tx) => {
      await tx.query(`INSERT INTO orders VALUES (3, 'before the failures')`);
      await capture(
        publish({ eventType: 'not a valid type!', payload: { label: 'bad' } }, { transaction: tx }),
      );
      // The statement right after the failed publish works: the transaction is not aborted.
      await tx.query(`INSERT INTO orders VALUES (4, 'after a bad input')`);
      await publish(
        { eventType: 'outbox.failed', payload: { label: 'kept' }, idempotencyKey: 'order-4' },
        { transaction: tx },
      );
      // The same key with the same event is the same event; with another payload, a conflict.
      const again = await publish(
        { eventType: 'outbox.failed', payload: { label: 'kept' }, idempotencyKey: 'order-4' },
        { transaction: tx },
      );
      expect(again.duplicate).toBe(true);
      await capture(
        publish(
          { eventType: 'outbox.failed', payload: { label: 'other' }, idempotencyKey: 'order-4' },
          { transaction: tx },
        ),
      );
      await tx.query(`INSERT INTO orders VALUES (5, 'after a conflict')`);
    });
    expect(failures.map((error) => error.code)).toEqual([
      'VALIDATION_FAILED',
      'IDEMPOTENCY_CONFLICT',
    ]);
    expect(failures[0].details).toEqual({
      issues: [expect.objectContaining({ path: 'eventType' })],
    });
    const orders = await pool.query('SELECT id FROM orders WHERE id >= 3 ORDER BY id');
    expect(orders.rows.map((row) => row.id)).toEqual([3, 4, 5]);
    await waitForLabels(['kept']);
    await publishMarker('after-failures');
    expect(receivedLabels().filter((label) => ['kept', 'bad', 'other'].includes(label))).toEqual([
      'kept',
    ]);
    expect(await eventsAtHookbase('outbox.failed')).toBe(1);
  });

  it('refuses to publish outside a transaction, with a code, writing nothing', async () => {
    const connection = await pool.connect();
    try {
      await expect(
        publish(
          { eventType: 'outbox.none', payload: { label: 'no-tx' } },
          { transaction: connection },
        ),
      ).rejects.toMatchObject({ code: 'NOT_IN_TRANSACTION' });
      await connection.query('BEGIN');
      await expect(connection.query('SELECT 1/0')).rejects.toThrow();
      await expect(
        publish(
          { eventType: 'outbox.none', payload: { label: 'aborted' } },
          { transaction: connection },
        ),
      ).rejects.toMatchObject({ code: 'TRANSACTION_ABORTED' });
      await connection.query('ROLLBACK');
    } finally {
      connection.release();
    }
    const labels = (await outboxRows()).map((row) => row.label);
    expect(labels).not.toContain('no-tx');
    expect(labels).not.toContain('aborted');
  });

  it('delivers two concurrent transactions in commit order, not in the order they wrote', async () => {
    const first = await pool.connect();
    const second = await pool.connect();
    try {
      await first.query('BEGIN');
      await second.query('BEGIN');
      // `first` writes (and takes its transaction id) before `second`, but commits after it.
      for (const label of ['first-1', 'first-2']) {
        await publish({ eventType: 'outbox.order', payload: { label } }, { transaction: first });
      }
      for (const label of ['second-1', 'second-2']) {
        await publish({ eventType: 'outbox.order', payload: { label } }, { transaction: second });
      }
      await second.query('COMMIT');
      await waitForLabels(['second-1', 'second-2']);
      await first.query('COMMIT');
    } finally {
      first.release();
      second.release();
    }
    await waitForLabels(['first-1', 'first-2']);
    const order = receivedLabels().filter((label) => /^(first|second)-/.test(label));
    expect(order).toEqual(['second-1', 'second-2', 'first-1', 'first-2']);
  });

  it('delivers many transactions, open together and committed in a shuffled order, in commit order', async () => {
    const count = 10;
    const connections = await Promise.all(Array.from({ length: count }, () => pool.connect()));
    const commitOrder = [7, 2, 9, 0, 5, 1, 8, 3, 6, 4];
    try {
      for (const connection of connections) await connection.query('BEGIN');
      for (const [n, connection] of connections.entries()) {
        for (const part of ['a', 'b']) {
          await publish(
            { eventType: 'outbox.shuffle', payload: { label: `tx${n}-${part}` } },
            { transaction: connection },
          );
        }
      }
      for (const n of commitOrder) await connections[n].query('COMMIT');
    } finally {
      for (const connection of connections) connection.release();
    }
    const expected = commitOrder.flatMap((n) => [`tx${n}-a`, `tx${n}-b`]);
    await waitForLabels(expected);
    expect(receivedLabels().filter((label) => /^tx\d-/.test(label))).toEqual(expected);
  });

  it('keeps one relay active per outbox; a standby takes over when it stops', async () => {
    const standby = startRelay();
    // Both ask for the lock; one session holds it, and it is the first relay's.
    const holders = async () =>
      (
        await pool.query(
          `SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'advisory' AND classid = 1215262571 AND objid = 2 AND granted`,
        )
      ).rows[0].n;
    await pollUntil(() => relay!.active, { description: 'the first relay active' });
    expect(await holders()).toBe(1);
    await inTransaction((tx) =>
      publish(
        { eventType: 'outbox.standby', payload: { label: 'before-takeover' } },
        { transaction: tx },
      ),
    );
    await waitForLabels(['before-takeover']);
    expect(standby.active).toBe(false);

    await relay!.stop();
    relay = standby;
    await pollUntil(() => standby.active, { description: 'the standby taking over' });
    expect(await holders()).toBe(1);
    await inTransaction((tx) =>
      publish(
        { eventType: 'outbox.standby', payload: { label: 'after-takeover' } },
        { transaction: tx },
      ),
    );
    await waitForLabels(['after-takeover']);
    expect(await eventsAtHookbase('outbox.standby')).toBe(2);
  });

  it('loses nothing and sends nothing twice when the relay is killed between sending and marking', async () => {
    await relay!.stop();
    relay = null;
    const env = {
      PATH: process.env.PATH ?? '',
      HOOKBASE_OUTBOX_DATABASE_URL: producer.url,
      HOOKBASE_URL: stack.url,
      HOOKBASE_API_KEY: apiKey,
      HOOKBASE_OUTBOX_IDLE_MS: '200',
    };
    const spawnRelay = (extra: Record<string, string>) => {
      const child = new HookbaseProcess(
        spawn(process.execPath, ['--enable-source-maps', CLI, 'outbox-relay'], {
          env: { ...env, ...extra },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
        env,
      );
      children.push(child);
      return child;
    };
    const holding = spawnRelay({ HOOKBASE_OUTBOX_TEST_HOLD_AFTER_ACCEPT: 'true' });
    await holding.waitForLine(/outbox relay active/, 30_000);
    const published = await inTransaction((tx) =>
      publish({ eventType: 'outbox.kill', payload: { label: 'killed' } }, { transaction: tx }),
    );
    const [, heldId] = await holding.waitForLine(
      /accepted (\S+), holding before marking sent/,
      30_000,
    );
    expect(heldId).toBe(published.id);
    await holding.kill();
    // Hookbase has the event; the outbox still says it is not sent.
    expect((await outboxRows()).find((row) => row.label === 'killed')).toMatchObject({
      sent: false,
    });
    await waitForLabels(['killed']);

    const next = spawnRelay({});
    await next.waitForLine(/outbox relay active/, 30_000);
    const marked = await pollUntil(
      async () => (await outboxRows()).find((row) => row.label === 'killed' && row.sent),
      { description: 'the killed relay’s row marked sent by the next relay' },
    );
    await publishMarker('after-kill');
    expect(receivedLabels().filter((label) => label === 'killed')).toHaveLength(1);
    expect(await eventsAtHookbase('outbox.kill')).toBe(1);
    // The resend was answered with the event Hookbase already had.
    const messages = await client.get(`${org}/messages?eventType=outbox.kill`);
    expect(marked.event_id).toBe(messages.body.data[0].eventId);
    await next.stop();
  });

  it('fills the outbox while Hookbase is unreachable and drains it in order when it is back', async () => {
    await relay?.stop();
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(stack.url).port));
    const port = await proxy.start();
    const warnings: RelayLogEntry[] = [];
    relay = startRelay(`http://127.0.0.1:${port}`, (entry) => {
      if (entry.level === 'warn') warnings.push(entry);
    });
    await pollUntil(() => relay!.active, { description: 'the relay active again' });
    await proxy.cut();
    const outageStarted = Date.now();
    const labels = Array.from({ length: 30 }, (_, n) => `down-${n}`);
    for (let n = 0; n < labels.length; n += 3) {
      await inTransaction(async (tx) => {
        for (const label of labels.slice(n, n + 3)) {
          await publish({ eventType: 'outbox.down', payload: { label } }, { transaction: tx });
        }
      });
    }
    // The relay keeps trying the head and backs off; the outbox holds every event.
    await pollUntil(() => warnings.length >= 4, {
      timeoutMs: 15_000,
      description: 'the relay retrying while Hookbase is unreachable',
    });
    const waiting = (await outboxRows()).filter((row) => labels.includes(row.label));
    expect(waiting).toHaveLength(30);
    expect(waiting.every((row) => !row.sent)).toBe(true);
    expect(warnings.every((entry) => String(entry.reason).startsWith('network'))).toBe(true);
    // Backoff, not a busy loop: delays of 100, 200, 400, 800 then 1000 ms.
    const outageMs = Date.now() - outageStarted;
    expect(warnings.length).toBeLessThanOrEqual(Math.ceil(outageMs / 100) + 1);
    expect(warnings.length).toBeLessThan(25);

    await proxy.restore();
    await waitForLabels(labels);
    expect(receivedLabels().filter((label) => label.startsWith('down-'))).toEqual(labels);
    await pollUntil(
      async () =>
        (await outboxRows()).filter((row) => labels.includes(row.label)).every((row) => row.sent),
      { description: 'every row marked sent' },
    );
    expect(await eventsAtHookbase('outbox.down')).toBe(30);
    await relay.stop();
    relay = null;
    await proxy.stop();
  });

  it('works with a TypeORM EntityManager and QueryRunner and the TypeORM migration', async () => {
    const typeormProducer = await createProducerDatabase();
    const dataSource = new DataSource({
      type: 'postgres',
      url: typeormProducer.url,
      migrations: [HookbaseOutbox1796169600000],
    });
    const typeormRelay = new OutboxRelay({
      database: typeormProducer.url,
      sender: sdkSender(stack.url),
      idleMs: 200,
    });
    try {
      await dataSource.initialize();
      await dataSource.runMigrations();
      await dataSource.query('CREATE TABLE orders (id int PRIMARY KEY)');
      await dataSource.transaction(async (manager) => {
        await manager.query('INSERT INTO orders VALUES (1)');
        await expect(
          publish({ eventType: 'outbox.typeorm', payload: [] as never }, { transaction: manager }),
        ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
        await manager.query('INSERT INTO orders VALUES (2)');
        await sdkClient().publish(
          { eventType: 'outbox.typeorm', payload: { label: 'typeorm-manager' } },
          { transaction: manager },
        );
      });
      const runner = dataSource.createQueryRunner();
      try {
        await expect(
          publish(
            { eventType: 'outbox.typeorm', payload: { label: 'x' } },
            { transaction: runner },
          ),
        ).rejects.toMatchObject({ code: 'NOT_IN_TRANSACTION' });
        await runner.startTransaction();
        await runner.query('INSERT INTO orders VALUES (3)');
        await sdkClient().publish(
          { eventType: 'outbox.typeorm', payload: { label: 'typeorm-runner' } },
          { transaction: runner },
        );
        await runner.commitTransaction();
        await runner.startTransaction();
        await publish(
          { eventType: 'outbox.typeorm', payload: { label: 'typeorm-rolled-back' } },
          { transaction: runner },
        );
        await runner.rollbackTransaction();
      } finally {
        await runner.release();
      }
      await dataSource.transaction((manager) =>
        publish(
          { eventType: 'outbox.typeorm', payload: { label: 'typeorm-last' } },
          { transaction: manager },
        ),
      );
      expect(
        (await dataSource.query('SELECT id FROM orders ORDER BY id')).map(
          (r: { id: number }) => r.id,
        ),
      ).toEqual([1, 2, 3]);
      typeormRelay.start();
      await waitForLabels(['typeorm-manager', 'typeorm-runner', 'typeorm-last']);
      expect(receivedLabels().filter((label) => label.startsWith('typeorm-'))).toEqual([
        'typeorm-manager',
        'typeorm-runner',
        'typeorm-last',
      ]);
      // The TypeORM migration reverts cleanly.
      await typeormRelay.stop();
      await dataSource.undoLastMigration();
      expect(await dataSource.query(`SELECT to_regclass('hookbase_outbox') AS outbox`)).toEqual([
        { outbox: null },
      ]);
    } finally {
      await typeormRelay.stop();
      if (dataSource.isInitialized) await dataSource.destroy();
      await typeormProducer.drop();
    }
  });
});
