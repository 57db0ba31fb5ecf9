/** What the progress line shows while a scenario runs. */
export interface ProgressSnapshot {
  phase: string;
  elapsedSeconds: number;
  /** Share done (0..1), or null when the phase has no known end (setup). */
  fraction: number | null;
  detail: string;
}

/** A plain progress line every few seconds, on stderr so that stdout keeps only the results. */
export class Progress {
  private timer: NodeJS.Timeout | undefined;
  private source: (() => ProgressSnapshot) | undefined;

  constructor(private readonly intervalMs = 5000) {}

  start(source: () => ProgressSnapshot): void {
    this.source = source;
    if (this.timer) return;
    this.timer = setInterval(() => this.draw(), this.intervalMs);
    this.timer.unref();
  }

  /** A line of its own: a phase change, a warning. */
  note(line: string): void {
    process.stderr.write(`${line}\n`);
  }

  private draw(): void {
    if (!this.source) return;
    const { phase, elapsedSeconds, fraction, detail } = this.source();
    const share =
      fraction === null ? '' : ` ${Math.floor(Math.min(1, Math.max(0, fraction)) * 100)}%`;
    this.note(`${elapsedSeconds.toFixed(0).padStart(4)}s${share} ${phase}: ${detail}`);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.source = undefined;
  }
}
