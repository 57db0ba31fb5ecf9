import { randomUUID } from 'node:crypto';
import { OutboxError } from './errors';
import { DEFAULT_MAX_EVENT_BYTES, OutboxEventInput, validateOutboxEvent } from './outbox-input';
import { OutboxTransaction, SqlExecutor, sqlExecutorFor } from './sql-executor';

export interface OutboxPublishOptions {
  /** The caller's open transaction: a `pg` client after BEGIN, or a TypeORM EntityManager/QueryRunner. */
  transaction: OutboxTransaction;
  /** The Hookbase installation's HOOKBASE_MAX_PAYLOAD_BYTES, when not the default. */
  maxEventBytes?: number;
}

export interface OutboxPublished {
  /** The outbox row's id: the event's idempotency key at Hookbase unless the input gave one. */
  id: string;
  idempotencyKey: string;
  /** True when the idempotency key was already in the outbox with the same type and payload. */
  duplicate: boolean;
}

const SAVEPOINT = 'hookbase_outbox_publish';

/** SQLSTATEs publish maps to codes of its own. */
const NO_ACTIVE_TRANSACTION = '25P01';
const IN_FAILED_TRANSACTION = '25P02';
const UNDEFINED_TABLE = '42P01';

function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const direct = (error as { code?: unknown }).code;
  if (typeof direct === 'string') return direct;
  // TypeORM's QueryFailedError keeps the driver's error.
  const driver = (error as { driverError?: { code?: unknown } }).driverError?.code;
  return typeof driver === 'string' ? driver : undefined;
}

function toOutboxError(error: unknown): OutboxError {
  if (error instanceof OutboxError) return error;
  const sqlState = sqlStateOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (sqlState === NO_ACTIVE_TRANSACTION) {
    return new OutboxError(
      'NOT_IN_TRANSACTION',
      'publish needs an open transaction: call it between BEGIN and COMMIT',
    );
  }
  if (sqlState === IN_FAILED_TRANSACTION) {
    return new OutboxError(
      'TRANSACTION_ABORTED',
      'the transaction had already failed before publish; roll it back',
    );
  }
  if (sqlState === UNDEFINED_TABLE) {
    return new OutboxError(
      'OUTBOX_NOT_INSTALLED',
      `the outbox tables are missing, run the Hookbase outbox migration (${message})`,
    );
  }
  return new OutboxError('OUTBOX_WRITE_FAILED', `writing to the outbox failed: ${message}`, {
    sqlState,
  });
}

/**
 * Writes an event into the outbox inside the caller's open transaction, in a savepoint: the event
 * is published when, and only if, the caller commits. Any failure (invalid input, a conflicting
 * idempotency key, a database error) rolls back to the savepoint and throws an OutboxError, and the
 * caller's transaction stays usable: its earlier and later statements commit as usual.
 */
export async function publish(
  input: OutboxEventInput,
  options: OutboxPublishOptions,
): Promise<OutboxPublished> {
  const sql = sqlExecutorFor(options?.transaction);
  if (!sql || sql.knownOutsideTransaction) {
    throw new OutboxError(
      'NOT_IN_TRANSACTION',
      'options.transaction must be a pg client inside BEGIN … COMMIT, or a TypeORM EntityManager or QueryRunner with an active transaction',
    );
  }
  try {
    await sql.query(`SAVEPOINT ${SAVEPOINT}`, []);
  } catch (error) {
    throw toOutboxError(error);
  }
  try {
    const event = validateOutboxEvent(input, options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
    const published = await insert(sql, event);
    await sql.query(`RELEASE SAVEPOINT ${SAVEPOINT}`, []);
    return published;
  } catch (error) {
    try {
      await sql.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`, []);
      await sql.query(`RELEASE SAVEPOINT ${SAVEPOINT}`, []);
    } catch {
      // The connection itself failed: the original error says more.
    }
    throw toOutboxError(error);
  }
}

async function insert(
  sql: SqlExecutor,
  event: ReturnType<typeof validateOutboxEvent>,
): Promise<OutboxPublished> {
  const id = randomUUID();
  const idempotencyKey = event.idempotencyKey ?? id;
  const inserted = await sql.query(
    `INSERT INTO hookbase_outbox (id, event_type, payload, endpoint_ids, idempotency_key)
     VALUES ($1, $2, $3::jsonb, $4::text[], $5)
     ON CONFLICT ON CONSTRAINT hookbase_outbox_idempotency_key DO NOTHING
     RETURNING id`,
    [id, event.eventType, event.payloadJson, event.endpointIds ?? null, idempotencyKey],
  );
  if (inserted.length === 1) return { id, idempotencyKey, duplicate: false };
  // The key is taken (by a committed row: ON CONFLICT waited for its transaction to end).
  const existing = await sql.query(
    `SELECT id::text AS id, (event_type = $2 AND payload = $3::jsonb) AS same
       FROM hookbase_outbox WHERE idempotency_key = $1`,
    [idempotencyKey, event.eventType, event.payloadJson],
  );
  const row = existing[0];
  if (row && row.same === true) {
    return { id: String(row.id), idempotencyKey, duplicate: true };
  }
  throw new OutboxError(
    'IDEMPOTENCY_CONFLICT',
    `idempotency key ${JSON.stringify(idempotencyKey)} is already in the outbox with another event type or payload`,
    { idempotencyKey },
  );
}
