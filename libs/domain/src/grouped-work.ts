/** What a group's work answers: one result per item, in the order the items were given. */
export type GroupWork<I, O> = (items: I[]) => Promise<O[]>;

interface Waiting<I, O> {
  items: readonly I[];
  resolve: (results: O[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Does the work of concurrent callers together: while one group is under way, the calls that
 * come meanwhile wait and go together as the next group, so a busy service makes one round trip
 * where it would make one per caller. An idle one starts at the end of the event loop's current
 * turn, together with the calls made in that turn; no timer, so it adds no measurable latency.
 *
 * A caller's items always stay together, in their order, in one group (a group takes whole calls
 * up to `maxItems`, and at least one call); each caller gets its own items' results, or the
 * error of the group it was in.
 */
export class GroupedWork<I, O> {
  private readonly waiting: Waiting<I, O>[] = [];
  private running = false;

  constructor(
    private readonly work: GroupWork<I, O>,
    private readonly maxItems = 500,
  ) {}

  run(items: readonly I[]): Promise<O[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<O[]>((resolve, reject) => {
      this.waiting.push({ items, resolve, reject });
      if (!this.running) {
        this.running = true;
        // The calls made in this same turn of the event loop (the batches of one Kafka fetch,
        // handed out together) start together, at the end of the turn.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const group = this.takeGroup();
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

  private takeGroup(): Waiting<I, O>[] {
    let count = this.waiting[0].items.length;
    let calls = 1;
    while (
      calls < this.waiting.length &&
      count + this.waiting[calls].items.length <= this.maxItems
    ) {
      count += this.waiting[calls].items.length;
      calls++;
    }
    return this.waiting.splice(0, calls);
  }
}
