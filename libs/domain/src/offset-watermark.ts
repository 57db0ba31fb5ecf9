/**
 * A partition's low watermark: the offset to commit is the lowest one not yet finished, never
 * "the last one read", so a crash replays exactly what was unfinished and one slow message does
 * not let the commit skip over it. Offsets are added in the order they are read (increasing);
 * they may finish in any order.
 */
export class OffsetWatermark {
  private readonly order: bigint[] = [];
  private start = 0;
  /** Read and not yet finished. */
  private readonly open = new Set<bigint>();
  private last: bigint | null = null;

  /** Messages read and not yet finished. */
  get unfinished(): number {
    return this.open.size;
  }

  add(offset: string): void {
    const value = BigInt(offset);
    if (this.last !== null && value <= this.last) {
      throw new Error(`offset ${offset} added after ${this.last}: offsets must increase`);
    }
    this.order.push(value);
    this.open.add(value);
    this.last = value;
  }

  /** Finishing an offset that is not open (never read, or finished already) changes nothing. */
  finish(offset: string): void {
    if (!this.open.delete(BigInt(offset))) return;
    while (this.start < this.order.length && !this.open.has(this.order[this.start])) {
      this.start++;
    }
    // Keep the array from growing without bound on a long-lived partition.
    if (this.start > 1024 && this.start * 2 > this.order.length) {
      this.order.splice(0, this.start);
      this.start = 0;
    }
  }

  /**
   * The offset to commit (Kafka's "next offset to read"): the lowest unfinished one, or one past
   * the last read when all are finished; null before anything was read.
   */
  committable(): string | null {
    if (this.start < this.order.length) return this.order[this.start].toString();
    return this.last === null ? null : (this.last + 1n).toString();
  }
}

/**
 * How many more records a partition whose window holds `limit` unfinished records may take,
 * with `unfinished` of them open: none until a quarter of the window is free, so that a full
 * window is not read again for a record or two at a time, then all the room there is.
 */
export function windowRoom(unfinished: number, limit: number): number {
  const room = limit - unfinished;
  return room >= Math.max(1, Math.ceil(limit / 4)) ? room : 0;
}
