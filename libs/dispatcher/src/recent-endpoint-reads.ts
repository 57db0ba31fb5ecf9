/** A read of some endpoints, as of `at` (the state it shows is at least that recent). */
export interface TimedRead {
  at: Date;
}

/**
 * The newest read of each endpoint this process made in the last `maxAgeMs`, whichever path made
 * it: an intake, or another message's read before its attempt. A message whose own read aged past
 * `maxAgeMs` while it waited for a slot goes by a newer one when there is one, instead of reading
 * its endpoint again; so the rule stays that an attempt goes by a read at most `maxAgeMs` old.
 * A read that did not find an endpoint counts too: the endpoint did not exist then. Reads are
 * held at most twice `maxAgeMs`, then dropped as time passes.
 */
export class RecentEndpointReads<R extends TimedRead> {
  private current = new Map<string, R>();
  private previous = new Map<string, R>();
  private since: number;

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.since = now();
  }

  /** `read` shows these endpoints as of its time. */
  note(endpointIds: Iterable<string>, read: R): void {
    this.rotate();
    for (const endpointId of endpointIds) {
      const known = this.current.get(endpointId);
      if (!known || known.at < read.at) this.current.set(endpointId, read);
    }
  }

  /** The newest read of the endpoint made at most `maxAgeMs` ago, if any. */
  newest(endpointId: string): R | undefined {
    this.rotate();
    const current = this.current.get(endpointId);
    const previous = this.previous.get(endpointId);
    const read = !current || (previous && previous.at > current.at) ? previous : current;
    return read && this.now() - read.at.getTime() <= this.maxAgeMs ? read : undefined;
  }

  /** Every `maxAgeMs` the reads noted since go to `previous`, and those before are dropped. */
  private rotate(): void {
    const now = this.now();
    if (now - this.since < this.maxAgeMs) return;
    this.previous = now - this.since < 2 * this.maxAgeMs ? this.current : new Map();
    this.current = new Map();
    this.since = now;
  }
}
