import { describeRaw, STEP_SEQ, stepOf, stepRouter } from './session';
import { Ledger } from '../../core/ledger';

describe('stepOf', () => {
  it('finds the step from the sequence number; the warm-up belongs to none', () => {
    expect(stepOf(0)).toBe(0);
    expect(stepOf(STEP_SEQ - 1)).toBe(0);
    expect(stepOf(2 * STEP_SEQ + 5)).toBe(2);
    expect(stepOf(-1)).toBe(-1);
  });
});

describe('stepRouter', () => {
  it("counts each delivery in its step's ledger and ignores the warm-up's", () => {
    const ledgers = [new Ledger('a'), new Ledger('b')];
    const targets = new Set([0]);
    ledgers[1].schedule(STEP_SEQ, 0, targets);
    ledgers[1].sent(STEP_SEQ, 1);
    ledgers[1].accepted(STEP_SEQ, 2, 'evt_b');
    const router = stepRouter(ledgers);
    router.attempt(STEP_SEQ, 0, 3, true);
    router.attempt(-1, 0, 3, true);
    expect(ledgers[1].progress.delivered).toBe(1);
    expect(ledgers[0].progress.attempts).toBe(0);
    router.deadLettered('evt_b', 0);
    expect(ledgers[1].progress.deadLettered).toBe(1);
  });
});

describe('describeRaw', () => {
  it('says how the baseline was measured', () => {
    const text = describeRaw({
      client: 'kafkajs 2.2.4',
      topic: 't',
      partitions: 6,
      keys: 1,
      recordBytes: 421.6,
      batch: 500,
      records: 100_000,
      seconds: 1.6,
      perSecond: 62_500,
      mbPerSecond: 26.35,
      stoppedByDeadline: false,
    });
    expect(text).toBe(
      '62,500 records/s, 26.4 MB/s (kafkajs 2.2.4, idempotent, acks=all, 100,000 records of 422 B, 500 per send, one key (the organization), so one of 6 partitions)',
    );
  });
});
