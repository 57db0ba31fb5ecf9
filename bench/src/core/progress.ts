/** What the progress line shows while a scenario runs. */
export interface ProgressSnapshot {
  phase: string;
  elapsedSeconds: number;
  /** Share done (0..1), or null when the phase has no known end (setup). */
  fraction: number | null;
  detail: string;
}

export function progressBar(fraction: number, width: number): string {
  const clamped = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const filled = Math.round(clamped * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(clamped * 100)).padStart(3)}%`;
}

export function formatProgress(snapshot: ProgressSnapshot, columns: number): string {
  const time = `${snapshot.elapsedSeconds.toFixed(0).padStart(4)}s`;
  const bar = snapshot.fraction === null ? '' : `${progressBar(snapshot.fraction, 20)} `;
  const line = `${time} ${bar}${snapshot.phase}: ${snapshot.detail}`;
  return line.length > columns - 1 ? `${line.slice(0, columns - 2)}…` : line;
}

/**
 * The progress display, on stderr so that stdout keeps only the results. On a terminal it is one
 * line redrawn in place; elsewhere (CI logs, pipes) one plain line every few seconds.
 */
export class Progress {
  private timer: NodeJS.Timeout | undefined;
  private source: (() => ProgressSnapshot) | undefined;
  private drawn = false;
  private readonly tty: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly intervalMs = stream.isTTY ? 250 : 5000,
  ) {
    this.tty = Boolean(stream.isTTY);
  }

  start(source: () => ProgressSnapshot): void {
    this.source = source;
    if (this.timer) return;
    this.timer = setInterval(() => this.draw(), this.intervalMs);
    this.timer.unref();
  }

  /** A line of its own (a phase change, a warning), printed above the progress line. */
  note(line: string): void {
    this.clear();
    this.stream.write(`${line}\n`);
    if (this.tty) this.draw();
  }

  private draw(): void {
    if (!this.source) return;
    const text = formatProgress(this.source(), this.stream.columns ?? 120);
    if (this.tty) {
      this.stream.write(`\r\x1b[2K${text}`);
      this.drawn = true;
    } else this.stream.write(`${text}\n`);
  }

  private clear(): void {
    if (this.tty && this.drawn) {
      this.stream.write('\r\x1b[2K');
      this.drawn = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.source = undefined;
    this.clear();
  }
}
