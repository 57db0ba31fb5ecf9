import { DataSource } from 'typeorm';

/** node-postgres's pool as TypeORM's driver holds it: enough of it to run a named statement. */
interface NamedQueryPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * A statement on the delivery path that node-postgres prepares once per connection, under its
 * name, instead of sending and parsing its text at every call. Those statements carry the
 * message state machine's transitions as SQL (kilobytes of CASE arms) and run for every batch,
 * so parsing and planning them cost more than running them. Its text must be fixed: one name,
 * one text, for the life of the process.
 */
export class NamedStatement<Row> {
  constructor(
    readonly name: string,
    readonly text: string,
  ) {}

  /** Runs it on a connection of the pool (outside any transaction) and answers its rows. */
  async run(dataSource: DataSource, values: unknown[]): Promise<Row[]> {
    const pool = (dataSource.driver as unknown as { master: NamedQueryPool }).master;
    const { rows } = await pool.query({ name: this.name, text: this.text, values });
    return rows as Row[];
  }
}
