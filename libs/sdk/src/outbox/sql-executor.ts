/**
 * The one thing publish needs from the caller's transaction: run a statement and get its rows.
 * Three shapes are accepted, told apart by their members (no import of pg or TypeORM needed):
 * a `pg` client (a PoolClient or Client after BEGIN), a TypeORM QueryRunner with an active
 * transaction, and a TypeORM EntityManager from `dataSource.transaction(...)` (its queryRunner).
 */

/** A `pg` Client or PoolClient. */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** A TypeORM QueryRunner. */
export interface QueryRunnerLike {
  readonly isTransactionActive: boolean;
  query(query: string, parameters?: unknown[], useStructuredResult?: boolean): Promise<unknown>;
  readonly manager: unknown;
}

/** A TypeORM EntityManager. */
export interface EntityManagerLike {
  readonly queryRunner?: QueryRunnerLike;
  transaction: unknown;
}

export type OutboxTransaction = PgClientLike | QueryRunnerLike | EntityManagerLike;

export interface SqlExecutor {
  query(text: string, values: unknown[]): Promise<Record<string, unknown>[]>;
  /** False when the handle is known to be outside a transaction (TypeORM tells; pg does not). */
  knownOutsideTransaction: boolean;
}

function isQueryRunner(value: object): value is QueryRunnerLike {
  return 'isTransactionActive' in value && 'manager' in value && 'query' in value;
}

function isEntityManager(value: object): value is EntityManagerLike {
  return 'transaction' in value && 'queryRunner' in value && !isQueryRunner(value);
}

function fromQueryRunner(runner: QueryRunnerLike): SqlExecutor {
  return {
    knownOutsideTransaction: !runner.isTransactionActive,
    async query(text, values) {
      // The structured result has the rows of any statement in `records`.
      const result = (await runner.query(text, values, true)) as { records?: unknown };
      return Array.isArray(result?.records) ? (result.records as Record<string, unknown>[]) : [];
    },
  };
}

/** Null when `transaction` is none of the accepted shapes. */
export function sqlExecutorFor(transaction: unknown): SqlExecutor | null {
  if (typeof transaction !== 'object' || transaction === null) return null;
  if (isQueryRunner(transaction)) return fromQueryRunner(transaction);
  if (isEntityManager(transaction)) {
    const runner = transaction.queryRunner;
    if (!runner) {
      // A manager not bound to a query runner runs each statement on any pooled connection.
      return { knownOutsideTransaction: true, query: async () => [] };
    }
    return fromQueryRunner(runner);
  }
  if ('query' in transaction && typeof transaction.query === 'function') {
    const client = transaction as PgClientLike;
    return {
      knownOutsideTransaction: false,
      async query(text, values) {
        return (await client.query(text, values)).rows;
      },
    };
  }
  return null;
}
