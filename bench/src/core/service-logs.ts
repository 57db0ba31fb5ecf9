/**
 * Reads the services' log lines as they come, counting errors and warnings and keeping a few
 * distinct examples: the report says plainly when Hookbase complained during a run.
 */
export class ServiceLogWatch {
  errors = 0;
  warnings = 0;
  private readonly examples = new Map<string, { line: string; count: number }>();

  constructor(private readonly keep = 8) {}

  line(service: string, written: string): void {
    const entry = jsonLogEntry(written);
    const line = entry ? readableEntry(entry) : written;
    const level = /\b(ERROR|FATAL)\b/.test(entry ? entry.level.toUpperCase() : line)
      ? 'error'
      : /\bWARN\b/.test(entry ? entry.level.toUpperCase() : line)
        ? 'warn'
        : undefined;
    if (!level) return;
    if (level === 'error') this.errors++;
    else this.warnings++;
    const text = cleanLogLine(line);
    const known = this.examples.get(signature(text));
    if (known) known.count++;
    else if (this.examples.size < this.keep) {
      this.examples.set(signature(text), { line: `${service}: ${text}`, count: 1 });
    }
  }

  summary(): { errors: number; warnings: number; examples: { line: string; count: number }[] } {
    return { errors: this.errors, warnings: this.warnings, examples: [...this.examples.values()] };
  }
}

interface JsonLogEntry {
  level: string;
  context?: unknown;
  message?: unknown;
}

/** A service's JSON log line (`LOG_FORMAT=json`, the default), or undefined for any other line. */
function jsonLogEntry(line: string): JsonLogEntry | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as Partial<JsonLogEntry>;
    return typeof entry.level === 'string' ? (entry as JsonLogEntry) : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON entry as `LEVEL [context] message`. */
function readableEntry(entry: JsonLogEntry): string {
  const context = typeof entry.context === 'string' ? ` [${entry.context}]` : '';
  return `${entry.level.toUpperCase()}${context} ${String(entry.message ?? '')}`;
}

/** Nest's line without its pid and timestamp prefix, cut to a readable length. */
export function cleanLogLine(line: string): string {
  return line
    .replace(/^\[Nest\]\s+\d+\s+-\s+.*?\s+(?=(?:LOG|ERROR|WARN|DEBUG|VERBOSE|FATAL)\s)/, '')
    .trim()
    .slice(0, 300);
}

/** Lines that differ only in ids, offsets or numbers count as one example. */
export function signature(text: string): string {
  return text.replace(/\b(msg|evt|ep|org)_[0-9a-z]+\b/g, '$1_…').replace(/\d+/g, '#');
}
