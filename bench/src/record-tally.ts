/**
 * The kafka-client scenario's ledger: which of N numbered records the producer had acknowledged
 * and which the consumer read back, so "consumed = produced" is checked record by record, with
 * duplicates and missing ones counted, not inferred from offsets.
 */
export class RecordTally {
  private readonly acked: Uint8Array;
  private readonly seen: Uint8Array;
  ackedCount = 0;
  distinct = 0;
  duplicates = 0;
  unexpected = 0;
  readonly ackTimes: { at: number; count: number }[] = [];
  readonly readTimes: number[] = [];

  constructor(readonly size: number) {
    this.acked = new Uint8Array(size);
    this.seen = new Uint8Array(size);
  }

  /** The broker acknowledged records [from, to). */
  ack(from: number, to: number, at: number): void {
    for (let seq = from; seq < to; seq++) {
      if (this.acked[seq] === 0) {
        this.acked[seq] = 1;
        this.ackedCount++;
      }
    }
    this.ackTimes.push({ at, count: to - from });
  }

  /** The consumer read record `seq`. */
  read(seq: number, at: number): void {
    this.readTimes.push(at);
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.size || this.acked[seq] === 0) {
      this.unexpected++;
      return;
    }
    if (this.seen[seq] === 1) {
      this.duplicates++;
      return;
    }
    this.seen[seq] = 1;
    this.distinct++;
  }

  get missing(): number {
    return this.ackedCount - this.distinct;
  }

  /** acknowledged = read back + missing, and nothing read that was never acknowledged. */
  problems(client: string): string[] {
    const problems: string[] = [];
    if (this.missing > 0)
      problems.push(`${client}: ${this.missing} acknowledged records were not read back`);
    if (this.unexpected > 0)
      problems.push(`${client}: ${this.unexpected} records read that were never acknowledged`);
    return problems;
  }
}
