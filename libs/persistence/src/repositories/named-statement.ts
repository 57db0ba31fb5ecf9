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
    const { rows } = await pool.query({
      name: this.name,
      text: this.text,
      values: values.map(textListsAsLiterals),
    });
    return rows as Row[];
  }
}

const NEEDS_ESCAPE = /[\\"]/;

/**
 * A list of strings (nulls allowed) as PostgreSQL's array literal, exactly as node-postgres
 * writes it (every element quoted, `\` and `"` escaped, null and undefined as NULL), built with
 * one join. node-postgres grows the literal one concatenation at a time; with lists of a thousand
 * ids per statement that was the largest source of garbage on the delivery path.
 */
export function textArrayLiteral(values: readonly (string | null | undefined)[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) parts[i] = 'NULL';
    else if (NEEDS_ESCAPE.test(value))
      parts[i] = `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    else parts[i] = `"${value}"`;
  }
  return `{${parts.join(',')}}`;
}

/** A parameter that is a list of strings goes as its literal; anything else as it is. */
export function textListsAsLiterals(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  for (const element of value) {
    if (element !== null && element !== undefined && typeof element !== 'string') return value;
  }
  return textArrayLiteral(value as (string | null | undefined)[]);
}
