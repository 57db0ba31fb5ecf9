/** Where a command writes: results to stdout (a table, or JSON with --json), notes to stderr. */
export interface Output {
  json: boolean;
  out(line: string): void;
  err(line: string): void;
}

export const processOutput = (json: boolean): Output => ({
  json,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});

export type Row = Record<string, unknown>;

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length ? value.join(',') : '*';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A plain text table: a header of the column names, then one line per row. */
export function table(rows: Row[], columns: string[]): string {
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((line) => line[i].length)),
  );
  const format = (line: string[]) =>
    line
      .map((text, i) => (i === line.length - 1 ? text : text.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [format(columns.map((c) => c.toUpperCase())), ...cells.map(format)].join('\n');
}

/** Prints rows as a table, or the value as JSON. */
export function print(output: Output, value: unknown, columns: string[]): void {
  if (output.json) {
    output.out(JSON.stringify(value, null, 2));
    return;
  }
  const rows = (Array.isArray(value) ? value : [value]) as Row[];
  output.out(rows.length ? table(rows, columns) : '(none)');
}
