/**
 * Why a publish into the outbox failed. Every failure carries a code; when `publish` throws one,
 * the caller's transaction is as it was before the call (the write was rolled back to its
 * savepoint), so the caller may go on and commit its other writes.
 */
export type OutboxErrorCode =
  /** The input breaks a rule Hookbase's API would refuse it for; `details.issues` lists them. */
  | 'VALIDATION_FAILED'
  /** The idempotency key is already in the outbox with another event type or payload. */
  | 'IDEMPOTENCY_CONFLICT'
  /** `transaction` is not inside an open transaction (no BEGIN, or a TypeORM manager without one). */
  | 'NOT_IN_TRANSACTION'
  /** The caller's transaction had already failed before the publish: it can only roll back. */
  | 'TRANSACTION_ABORTED'
  /** The outbox tables are missing: run the outbox migration. */
  | 'OUTBOX_NOT_INSTALLED'
  /** PostgreSQL refused the write for another reason; `details.sqlState` says which. */
  | 'OUTBOX_WRITE_FAILED';

export class OutboxError extends Error {
  constructor(
    readonly code: OutboxErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'OutboxError';
  }
}
