import { Backoff, backoffDelay } from '@hookbase/domain';
import type { Client, ClientConfig } from 'pg';
import { EventSender, OutboxEvent } from './event-sender';
import { DEFAULT_RELAY_BACKOFF, relayRetryDelay } from './relay-policy';
import { OUTBOX_CHANNEL, OUTBOX_LOCK_CLASS, RELAY_LOCK } from './schema';

export interface RelayLogEntry {
  level: 'info' | 'warn' | 'error';
  message: string;
  [field: string]: unknown;
}

export interface OutboxRelayOptions {
  /** The producer's database (where the outbox is): a connection string or a pg ClientConfig. */
  database: string | ClientConfig;
  /** Hands each event to Hookbase (FetchEventSender, or any other client). */
  sender: EventSender;
  /** Rows read per query (1–1000, default 100). Events are still sent one at a time, in order. */
  batchSize?: number;
  /** When the outbox is empty, look again after this long; a commit wakes the relay sooner. */
  idleMs?: number;
  /** While another relay holds the outbox, try to take over this often. */
  standbyMs?: number;
  /** Waits after Hookbase or the database failed, growing with each failure in a row. */
  backoff?: Backoff;
  /** Delete rows sent longer ago than this (default 24 h; null keeps them). */
  pruneSentAfterMs?: number | null;
  log?: (entry: RelayLogEntry) => void;
  /** For tests: runs after Hookbase accepted an event and before the row is marked sent. */
  afterAccepted?: (event: OutboxEvent) => Promise<void> | void;
}

/** What one pass over the outbox did, for `drainOnce` callers and the loop. */
export type RelayPass =
  | { kind: 'idle' }
  | { kind: 'progress'; sent: number; rejected: number }
  | { kind: 'retry'; sent: number; delayMs: number; reason: string };

const PRUNE_EVERY_MS = 60_000;

/** `pg` is an optional peer of the package: loaded when a relay first connects, not on import. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pg = () => require('pg') as typeof import('pg');

const defaultLog = (entry: RelayLogEntry) => {
  if (entry.level !== 'info') console.error(JSON.stringify(entry));
};

interface OutboxRow {
  id: string;
  event_type: string;
  payload: Record<string, unknown>;
  endpoint_ids: string[] | null;
  idempotency_key: string;
  commit_seq: string;
}

/**
 * Delivers committed outbox rows to Hookbase, in commit order (then write order within a
 * transaction), and marks each sent once Hookbase accepted it. One relay per outbox is active: it
 * holds a session advisory lock on its own connection; others wait as standbys and take over when
 * that connection ends. Being killed at any point is safe: a row accepted but not yet marked is
 * sent again with the same idempotency key, and Hookbase answers with the event it already has.
 *
 * Head of line: while Hookbase is unreachable or answers 5xx/429, the relay retries the first
 * unsent row with backoff and sends nothing after it, so order is kept. A row Hookbase refuses for
 * good (400, 409, 413, 415, 422) is marked failed with the reason and the relay moves on.
 */
export class OutboxRelay {
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly standbyMs: number;
  private readonly backoff: Backoff;
  private readonly log: (entry: RelayLogEntry) => void;
  private client: Client | null = null;
  private locked = false;
  private stopping = false;
  private running: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** How the current sleep may end early: a commit wakes an idle relay, not one backing off. */
  private wakeOnCommit = false;
  private commitSeen = false;
  private failures = 0;
  private lastPrune = 0;

  constructor(private readonly options: OutboxRelayOptions) {
    this.batchSize = options.batchSize ?? 100;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1 || this.batchSize > 1000) {
      throw new RangeError(
        `batchSize must be a whole number from 1 to 1000, got ${this.batchSize}`,
      );
    }
    this.idleMs = options.idleMs ?? 1000;
    this.standbyMs = options.standbyMs ?? 2000;
    this.backoff = options.backoff ?? DEFAULT_RELAY_BACKOFF;
    this.log = options.log ?? defaultLog;
  }

  /** Whether this relay holds the outbox's lock right now. */
  get active(): boolean {
    return this.locked;
  }

  /** Starts relaying in the background until stop(). */
  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop();
  }

  /** Finishes the event in hand, releases the lock and closes the connection. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    this.running = null;
    await this.disconnect();
  }

  /**
   * One pass, for callers that drive the relay themselves (a cron job): takes the lock (answers
   * idle when another relay has it), relays up to one batch, and keeps the connection for the next.
   */
  async drainOnce(): Promise<RelayPass> {
    if (!(await this.ensureActive())) return { kind: 'idle' };
    return this.pass();
  }

  private async loop(): Promise<void> {
    let databaseFailures = 0;
    while (!this.stopping) {
      let waitMs: number;
      let idle = false;
      try {
        if (!(await this.ensureActive())) {
          waitMs = this.standbyMs;
        } else {
          const pass = await this.pass();
          await this.maybePrune();
          idle = pass.kind === 'idle';
          waitMs = idle ? this.idleMs : pass.kind === 'retry' ? pass.delayMs : 0;
        }
        databaseFailures = 0;
      } catch (error) {
        databaseFailures++;
        waitMs = backoffDelay(this.backoff, databaseFailures - 1);
        this.log({
          level: 'error',
          message: 'outbox database failed; reconnecting',
          error: (error as Error).message,
          retryInMs: waitMs,
        });
        await this.disconnect();
      }
      if (waitMs > 0 && !this.stopping) await this.sleep(waitMs, idle);
    }
  }

  /** Connects, listens and takes the lock when needed; false while another relay holds it. */
  private async ensureActive(): Promise<boolean> {
    if (!this.client) {
      const client = new (pg().Client)(
        typeof this.options.database === 'string'
          ? { connectionString: this.options.database }
          : this.options.database,
      );
      client.on('error', (error) => {
        this.log({ level: 'warn', message: 'outbox connection lost', error: error.message });
        if (this.client === client) {
          this.client = null;
          this.locked = false;
          this.wake?.();
        }
        void client.end().catch(() => undefined);
      });
      client.on('notification', () => this.onCommit());
      try {
        await client.connect();
      } catch (error) {
        void client.end().catch(() => undefined);
        throw error;
      }
      this.client = client;
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    }
    if (!this.locked) {
      const { rows } = await this.client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock($1, $2) AS locked',
        [OUTBOX_LOCK_CLASS, RELAY_LOCK],
      );
      this.locked = rows[0]?.locked === true;
      if (this.locked) this.log({ level: 'info', message: 'outbox relay active' });
    }
    return this.locked;
  }

  private async pass(): Promise<RelayPass> {
    const client = this.client;
    if (!client) throw new Error('the outbox connection was lost');
    const { rows } = await client.query<OutboxRow>(
      `SELECT o.id::text AS id, o.event_type, o.payload, o.endpoint_ids, o.idempotency_key,
              c.commit_seq::text AS commit_seq
         FROM hookbase_outbox_commits c
         JOIN hookbase_outbox o ON o.txid = c.txid
        WHERE o.sent_at IS NULL AND o.failed_at IS NULL
        ORDER BY c.commit_seq, o.position
        LIMIT $1`,
      [this.batchSize],
    );
    if (rows.length === 0) return { kind: 'idle' };
    let sent = 0;
    let rejected = 0;
    let lastSeq: string | null = null;
    let retry: { delayMs: number; reason: string } | null = null;
    for (const row of rows) {
      if (this.stopping) break;
      const event: OutboxEvent = {
        id: row.id,
        eventType: row.event_type,
        payload: row.payload,
        endpointIds: row.endpoint_ids,
        idempotencyKey: row.idempotency_key,
      };
      const outcome = await this.options.sender.send(event);
      if (outcome.kind === 'retry') {
        this.failures++;
        const delayMs = relayRetryDelay(this.backoff, this.failures, outcome.retryAfterMs);
        this.log({
          level: 'warn',
          message: 'Hookbase did not take the event; retrying',
          outboxId: row.id,
          reason: outcome.reason,
          failures: this.failures,
          retryInMs: delayMs,
        });
        retry = { delayMs, reason: outcome.reason };
        break;
      }
      this.failures = 0;
      if (outcome.kind === 'accepted') {
        await this.options.afterAccepted?.(event);
        // Marked before the next send: a relay whose session (and so its lock) is gone fails
        // here, so it never sends past the event in hand while a successor sends the same
        // rows; that event is the successor's first too, and its key makes it one event.
        await client.query(
          `UPDATE hookbase_outbox SET sent_at = clock_timestamp(), event_id = $2 WHERE id = $1`,
          [row.id, outcome.eventId],
        );
        sent++;
      } else {
        await client.query(
          `UPDATE hookbase_outbox SET failed_at = clock_timestamp(), last_error = $2 WHERE id = $1`,
          [row.id, `${outcome.status} ${outcome.code}: ${outcome.message}`],
        );
        rejected++;
        this.log({
          level: 'error',
          message: 'Hookbase refused the event for good; marked failed',
          outboxId: row.id,
          status: outcome.status,
          code: outcome.code,
          reason: outcome.message,
        });
      }
      lastSeq = row.commit_seq;
    }
    if (lastSeq !== null) await this.forgetFinishedCommits(client, lastSeq);
    return retry ? { kind: 'retry', sent, ...retry } : { kind: 'progress', sent, rejected };
  }

  /** Commit numbers whose rows are all sent or failed are needed no more. */
  private async forgetFinishedCommits(client: Client, upToSeq: string): Promise<void> {
    await client.query(
      `DELETE FROM hookbase_outbox_commits c
        WHERE c.commit_seq <= $1
          AND NOT EXISTS (SELECT 1 FROM hookbase_outbox o
                           WHERE o.txid = c.txid AND o.sent_at IS NULL AND o.failed_at IS NULL)`,
      [upToSeq],
    );
  }

  private async maybePrune(): Promise<void> {
    const after =
      this.options.pruneSentAfterMs === undefined ? 86_400_000 : this.options.pruneSentAfterMs;
    const client = this.client;
    if (after === null || !client || Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    await client.query(
      `DELETE FROM hookbase_outbox
        WHERE sent_at < clock_timestamp() - $1 * interval '1 millisecond'`,
      [after],
    );
  }

  private onCommit(): void {
    if (this.wake && this.wakeOnCommit) this.wake();
    else this.commitSeen = true;
  }

  /**
   * Waits `ms`, or less when the connection drops or stop() is called, and, when `wakeOnCommit`,
   * when a commit is notified (also one notified since the last sleep, which the last read may
   * have missed).
   */
  private sleep(ms: number, wakeOnCommit: boolean): Promise<void> {
    if (wakeOnCommit && this.commitSeen) {
      this.commitSeen = false;
      return Promise.resolve();
    }
    this.commitSeen = false;
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        if (this.wake === finish) this.wake = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wakeOnCommit = wakeOnCommit;
      this.wake = finish;
    });
  }

  private async disconnect(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.locked = false;
    if (!client) return;
    // Ending the session releases the advisory lock.
    await client.end().catch(() => undefined);
  }
}
