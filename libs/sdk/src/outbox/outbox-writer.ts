import type { OutboxWriter } from '../client/hookbase';
import { publish } from './publish';
import type { OutboxTransaction } from './sql-executor';

export interface PostgresOutboxOptions {
  /** The Hookbase installation's HOOKBASE_MAX_PAYLOAD_BYTES, when not the default. */
  maxEventBytes?: number;
}

/**
 * The outbox as the client's writer: `new Hookbase({ …, outbox: postgresOutbox() })` makes
 * `hookbase.publish(input, { transaction })` write into the caller's open transaction (a `pg`
 * client after BEGIN, or a TypeORM EntityManager or QueryRunner), exactly as `publish` does.
 */
export function postgresOutbox(
  options: PostgresOutboxOptions = {},
): OutboxWriter<OutboxTransaction> {
  return {
    publish: (input, transaction) =>
      publish(input, {
        transaction,
        ...(options.maxEventBytes !== undefined ? { maxEventBytes: options.maxEventBytes } : {}),
      }),
  };
}
