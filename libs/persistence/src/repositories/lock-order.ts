/**
 * Batched writes to `messages` that may meet the same rows at the same time (a FIFO lane marks
 * its head as being delivered while the attempt that ends it is already being recorded, each
 * grouped with other lanes' rows) must lock those rows in one order, or two of them can each
 * hold a row the other waits for: PostgreSQL reports a deadlock and one of them fails. An UPDATE
 * joined to `unnest` locks rows in whatever order its plan meets them, so such a statement first
 * locks its rows by id, in a CTE, and then updates them.
 */

/** A CTE named `locked` that locks the messages whose ids are the array parameter `param`, by id. */
export const LOCK_IN_ID_ORDER = (param: string) =>
  `locked AS (SELECT id FROM messages WHERE id = ANY(${param}::text[]) ORDER BY id FOR NO KEY UPDATE)`;

/**
 * A condition that makes the statement take every lock of `locked` before its first row: an
 * uncorrelated subquery is evaluated once, at the start, as a one-time filter.
 */
export const LOCKED_FIRST = '(SELECT count(*) FROM locked) >= 0';
