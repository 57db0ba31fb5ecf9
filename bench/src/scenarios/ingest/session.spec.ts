import { STEP_SEQ, stepOf, stepRouter } from './session';
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
