import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunReport, ResultTable, ScenarioResult } from './result';
import { ServiceUsage } from './sampler';

type Figure = number | null | undefined;
const known = (value: Figure): value is number => value != null && Number.isFinite(value);

export const fmtInt = (value: Figure) =>
  known(value) ? Math.round(value).toLocaleString('en-US') : '–';

export const fmtRate = (value: Figure) =>
  known(value) ? (value >= 100 ? fmtInt(value) : value.toFixed(1)) : '–';

export function fmtMs(value: Figure): string {
  if (!known(value)) return '–';
  if (value >= 1000) return `${(value / 1000).toFixed(value >= 10_000 ? 1 : 2)} s`;
  return value >= 100 ? `${Math.round(value)} ms` : `${value.toFixed(1)} ms`;
}

export const fmtMb = (value: Figure) => (known(value) ? `${Math.round(value)} MB` : '–');

/** a ÷ b to two places, or "–" when b is not a positive figure. */
export const fmtRatio = (a: Figure, b: Figure) =>
  known(a) && known(b) && b > 0 ? (a / b).toFixed(2) : '–';

/** The CPU of a run's Hookbase processes together (100 % = one core). */
export function fmtCpu(run: RunReport): string {
  const measured = run.services.filter((s) => s.cpuPercent !== null);
  if (measured.length === 0) return '–';
  return `${Math.round(measured.reduce((sum, s) => sum + (s.cpuPercent ?? 0), 0))}%`;
}

/** Headline rows, leaving out the ones a condition turned into `false`. */
export const rows = (...all: ([string, string] | false)[]) =>
  all.filter((row): row is [string, string] => row !== false);

/** A plain-text table: columns padded to their widest cell, numbers right-aligned. */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map(
    (_, i) =>
      rows.length > 0 && rows.every((r) => /^[–\d.,\s%×<>~-]*(ms|s|MB|\/s|x)?$/.test(r[i] ?? '')),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** A column of a table: its header, and how a row shows in it. */
export type Column<T> = readonly [string, (row: T) => string];

/** A table declared once by its columns, so a header and its cells cannot drift apart. */
export function table<T>(
  title: string,
  rows: readonly T[],
  columns: readonly (Column<T> | false)[],
): ResultTable {
  const kept = columns.filter((c): c is Column<T> => c !== false);
  return {
    title,
    header: kept.map(([header]) => header),
    rows: rows.map((row) => kept.map(([, cell]) => cell(row))),
  };
}

/** The per-run table every delivery scenario prints (and the JSON keeps). */
export function runsTable(runs: readonly RunReport[]): ResultTable {
  return table('Runs', runs, [
    ['run', (r) => r.label],
    ['published', (r) => fmtInt(r.ledger.messages.published)],
    ['delivered', (r) => fmtInt(r.ledger.messages.delivered)],
    ['dead-lettered', (r) => fmtInt(r.ledger.messages.deadLettered)],
    ['missing', (r) => fmtInt(r.ledger.messages.missing)],
    ['duplicates', (r) => fmtInt(r.ledger.messages.duplicates)],
    ['attempts', (r) => fmtInt(r.ledger.messages.attempts)],
    ['throughput/s', (r) => fmtRate(r.throughputPerSecond)],
    ['peak/s', (r) => fmtRate(r.peakDeliveredPerSecond)],
    ['p50', (r) => fmtMs(r.latency?.p50)],
    ['p95', (r) => fmtMs(r.latency?.p95)],
    ['p99', (r) => fmtMs(r.latency?.p99)],
    ['max', (r) => fmtMs(r.latency?.max)],
    ['balanced', (r) => (r.ledger.balanced ? 'yes' : 'NO')],
    runs.some((r) => r.order) && [
      'out of order',
      (r) => (r.order ? `${fmtInt(r.order.violations)} of ${fmtInt(r.order.deliveries)}` : '–'),
    ],
    ['peak lag', (r) => (r.lag.peak ? fmtInt(r.lag.peak.dispatcher) : '–')],
  ]);
}

export function servicesTable(services: readonly ServiceUsage[]): ResultTable {
  return table('Service processes', services, [
    ['process', (s) => s.name],
    ['pid', (s) => String(s.pid ?? '–')],
    ['peak RSS (VmHWM)', (s) => fmtMb(s.peakRssMb)],
    ['peak RSS in load', (s) => fmtMb(s.windowPeakRssMb)],
    ['CPU in load', (s) => (s.cpuSeconds === null ? '–' : `${s.cpuSeconds.toFixed(1)} s`)],
    ['CPU %', (s) => (s.cpuPercent === null ? '–' : `${Math.round(s.cpuPercent)}%`)],
  ]);
}

export function renderResult(result: ScenarioResult): string {
  const out: string[] = [];
  const verdict = { ok: 'OK', void: 'VOID (see problems)', error: 'ERROR' }[result.status];
  out.push(
    `\n══ ${result.scenario}: ${result.title} — ${verdict} (${result.durationSeconds.toFixed(0)} s)`,
  );
  if (result.headline.length > 0) {
    const width = Math.max(...result.headline.map(([k]) => k.length));
    for (const [key, value] of result.headline) out.push(`  ${key.padEnd(width)}  ${value}`);
  }
  for (const table of result.tables)
    out.push('', `${table.title}:`, renderTable(table.header, table.rows));
  if (result.serviceLogs && (result.serviceLogs.errors > 0 || result.serviceLogs.warnings > 0)) {
    out.push(
      '',
      `Service logs: ${result.serviceLogs.errors} errors, ${result.serviceLogs.warnings} warnings`,
    );
    for (const example of result.serviceLogs.examples)
      out.push(`  ${example.count}× ${example.line}`);
  }
  if (result.harness) {
    out.push(
      '',
      `Harness: event-loop delay p99 ${fmtMs(result.harness.eventLoopDelayP99Ms)}, max ${fmtMs(result.harness.eventLoopDelayMaxMs)}; CPU ${result.harness.cpuSeconds.toFixed(1)} s`,
    );
  }
  for (const note of result.notes) out.push(`note: ${note}`);
  for (const problem of result.problems) out.push(`PROBLEM: ${problem}`);
  if (result.files) out.push(`results: ${result.files.json}`);
  return out.join('\n');
}

function stamp(date: Date): string {
  return date.toISOString().replace(/[:]/g, '').replace(/\..*$/, '').replace('T', '-');
}

/** Writes `<scenario>-<time>.json` into the results folder. */
export async function writeResultFiles(
  dir: string,
  result: ScenarioResult,
): Promise<ScenarioResult> {
  await mkdir(dir, { recursive: true });
  const json = join(dir, `${result.scenario}-${stamp(new Date(result.startedAt))}.json`);
  const withFiles: ScenarioResult = { ...result, files: { json } };
  await writeFile(json, `${JSON.stringify(withFiles, null, 2)}\n`);
  return withFiles;
}
