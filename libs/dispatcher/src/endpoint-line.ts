import { backlogReturn, drainIntervalMs, handBackDue, meanAttemptAfter } from '@hookbase/domain';

/** What a turn in an endpoint's line came to: the task's result, or handed back until `until`. */
export type LineOutcome<T> = { ran: true; value: T } | { ran: false; until: Date };

interface Waiter {
  since: number;
  /** null: a slot is the waiter's; a time: handed back until then. */
  answer(until: number | null): void;
}

/**
 * One non-FIFO endpoint's line in this dispatcher: at most `concurrency` of its messages hold a
 * slot (in an attempt, or waiting for the dispatch pool), the others wait in arrival order. A
 * message that has waited `maxWaitMs` while every slot is in an attempt is handed back with the
 * time it should come again (the rules are `handBackDue` and `backlogReturn`), so that a slow
 * endpoint's backlog leaves its partition's read-ahead window instead of filling it. One timer
 * per line, set for its oldest waiter.
 */
export class EndpointLine {
  private taken = 0;
  private readonly waiting: Waiter[] = [];
  /** Start times of the attempts in flight, in start order. */
  private readonly attempts: number[] = [];
  private meanAttemptMs: number | null = null;
  private reservedUntil = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly concurrency: number,
    private readonly maxWaitMs: number,
  ) {}

  /**
   * Runs `task` in one of the endpoint's slots, waiting in line for one; or, when handed back
   * first, does not run it and says until when.
   */
  async run<T>(task: () => Promise<T>): Promise<LineOutcome<T>> {
    if (this.taken < this.concurrency) this.taken++;
    else {
      const until = await new Promise<number | null>((answer) => {
        this.waiting.push({ since: Date.now(), answer });
        this.arm();
      });
      if (until !== null) return { ran: false, until: new Date(until) };
    }
    try {
      return { ran: true, value: await task() };
    } finally {
      const next = this.waiting.shift();
      if (next) next.answer(null);
      else this.taken--;
      if (this.waiting.length === 0) this.disarm();
    }
  }

  /** Runs an attempt at the endpoint (within a slot of `run`), counting it in flight and timing it. */
  async attempt<T>(task: () => Promise<T>): Promise<T> {
    const startedAt = Date.now();
    this.attempts.push(startedAt);
    try {
      return await task();
    } finally {
      this.attempts.splice(this.attempts.indexOf(startedAt), 1);
      this.meanAttemptMs = meanAttemptAfter(this.meanAttemptMs, Date.now() - startedAt);
    }
  }

  /** Messages waiting in line (not holding a slot). */
  get waitingCount(): number {
    return this.waiting.length;
  }

  private arm(): void {
    if (this.timer || this.waiting.length === 0) return;
    const due = this.waiting[0].since + this.maxWaitMs;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, due - Date.now()));
    this.timer.unref();
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Hands back the waiters that waited long enough behind the endpoint's own attempts. */
  private sweep(): void {
    this.timer = undefined;
    const now = Date.now();
    let due = 0;
    while (
      due < this.waiting.length &&
      handBackDue(
        now - this.waiting[due].since,
        this.maxWaitMs,
        this.attempts.length,
        this.concurrency,
      )
    ) {
      due++;
    }
    if (due === 0 && this.waiting.length > 0 && now - this.waiting[0].since >= this.maxWaitMs) {
      // The line waits for the dispatch pool, not for the endpoint: look again later.
      this.timer = setTimeout(() => this.sweep(), this.maxWaitMs);
      this.timer.unref();
      return;
    }
    const handed = this.waiting.splice(0, due);
    const interval = drainIntervalMs({
      concurrency: this.concurrency,
      meanAttemptMs: this.meanAttemptMs,
      oldestAttemptMs: this.attempts.length > 0 ? now - this.attempts[0] : 0,
    });
    const ahead = this.attempts.length + this.waiting.length;
    for (const waiter of handed) {
      const back = backlogReturn(now, ahead, interval, this.reservedUntil);
      this.reservedUntil = back.reservedUntil;
      waiter.answer(back.at);
    }
    this.arm();
  }
}
