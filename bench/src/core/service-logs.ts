/**
 * Reads the services' log lines as they come, counting errors and warnings and keeping a few
 * distinct examples: the report says plainly when Hookbase complained during a run.
 */
export class ServiceLogWatch {
  errors = 0;
  warnings = 0;
  private readonly examples = new Map<string, { line: string; count: number }>();

  constructor(private readonly keep = 8) {}

  line(service: string, line: string): void {
    const level = /\b(ERROR|FATAL)\b/.test(line)
      ? 'error'
      : /\bWARN\b/.test(line)
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
