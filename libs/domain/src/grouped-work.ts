/** What a group's work answers: one result per item, in the order the items were given. */
export type GroupWork<I, O> = (items: I[]) => Promise<O[]>;

export interface GroupedWorkOptions {
  /** A group takes whole calls up to this many items (and always at least one call). */
  maxItems?: number;
  /**
   * When an idle GroupedWork starts a call: `end-of-turn` (the default) waits for the end of the
   * event loop's turn so that the calls made in that turn (the batches of one Kafka fetch) go
   * together; `at-once` starts it in the same turn, for callers where each call stands alone.
   */
  start?: 'end-of-turn' | 'at-once';
  /**
   * An idle GroupedWork waits this long after a call that may wait before it starts, so that the
   * calls of the next few milliseconds join its group (0, the default: no wait). Only an idle one
   * waits: calls that come while a group is under way still go right after it. A call made with
   * `soon`, or enough calls to fill a group, end the wait.
   */
  gatherMs?: number;
}

/** How one call is taken. */
export interface GroupedCallOptions {
  /** The caller stops waiting when it aborts (see `run`). */
  signal?: AbortSignal;
  /** The call's group starts without waiting out `gatherMs`. */
  soon?: boolean;
}

interface Waiting<I, O> {
  items: readonly I[];
  /** The caller stopped waiting: the call is answered already, and never joins a group. */
  withdrawn: boolean;
  resolve: (results: O[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Does the work of concurrent callers together, one group at a time: while one group is under
 * way, the calls that come meanwhile wait and go together as the next group, so a busy service
 * makes one round trip where it would make one per caller. No timer unless `gatherMs` asks for
 * one, so by default it adds no measurable latency.
 *
 * A caller's items always stay together, in their order, in one group (a group takes whole calls
 * up to `maxItems`, and at least one call); each caller gets its own items' results, or the
 * error of the group it was in. A caller may stop waiting (its `signal` aborts): it is answered
 * with the signal's reason at once, and its items are left out unless their group already started.
 */
export class GroupedWork<I, O> {
  private readonly waiting: Waiting<I, O>[] = [];
  /** The items of the waiting calls (withdrawn ones included): a full group ends a gathering wait. */
  private waitingItems = 0;
  private running = false;
  private gathering: NodeJS.Timeout | undefined;
  private readonly maxItems: number;
  private readonly start: 'end-of-turn' | 'at-once';
  private readonly gatherMs: number;

  constructor(
    private readonly work: GroupWork<I, O>,
    options: number | GroupedWorkOptions = {},
  ) {
    const {
      maxItems = 500,
      start = 'end-of-turn',
      gatherMs = 0,
    } = typeof options === 'number' ? { maxItems: options } : options;
    this.maxItems = maxItems;
    this.start = start;
    this.gatherMs = gatherMs;
  }

  run(items: readonly I[], { signal, soon = false }: GroupedCallOptions = {}): Promise<O[]> {
    if (items.length === 0) return Promise.resolve([]);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<O[]>((resolve, reject) => {
      const call: Waiting<I, O> = { items, withdrawn: false, resolve, reject };
      if (signal) {
        const withdraw = () => {
          call.withdrawn = true;
          reject(signal.reason);
        };
        signal.addEventListener('abort', withdraw, { once: true });
        call.resolve = (results) => {
          signal.removeEventListener('abort', withdraw);
          resolve(results);
        };
        call.reject = (error) => {
          signal.removeEventListener('abort', withdraw);
          reject(error);
        };
      }
      this.waiting.push(call);
      this.waitingItems += items.length;
      if (this.running) return;
      if (this.gatherMs > 0 && !soon && this.waitingItems < this.maxItems) {
        this.gathering ??= setTimeout(() => {
          this.gathering = undefined;
          this.begin();
        }, this.gatherMs);
        return;
      }
      this.begin();
    });
  }

  /** Starts draining the waiting calls, ending a gathering wait. */
  private begin(): void {
    if (this.gathering) {
      clearTimeout(this.gathering);
      this.gathering = undefined;
    }
    this.running = true;
    if (this.start === 'at-once') void this.drain();
    // The calls made in this same turn of the event loop start together, at its end.
    else setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const group = this.takeGroup();
        if (group.length === 0) continue;
        const items = group.flatMap((call) => call.items);
        let results: O[];
        try {
          results = await this.work(items);
          if (results.length !== items.length)
            throw new Error(`grouped work answered ${results.length} results for ${items.length}`);
        } catch (error) {
          group.forEach((call) => call.reject(error));
          continue;
        }
        let start = 0;
        for (const call of group) {
          call.resolve(results.slice(start, start + call.items.length));
          start += call.items.length;
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** The next group: whole calls up to maxItems; withdrawn calls are dropped, never worked. */
  private takeGroup(): Waiting<I, O>[] {
    const group: Waiting<I, O>[] = [];
    let count = 0;
    let taken = 0;
    for (; taken < this.waiting.length; taken++) {
      const next = this.waiting[taken];
      if (next.withdrawn) continue;
      if (group.length > 0 && count + next.items.length > this.maxItems) break;
      group.push(next);
      count += next.items.length;
    }
    for (const call of this.waiting.splice(0, taken)) this.waitingItems -= call.items.length;
    return group;
  }
}
