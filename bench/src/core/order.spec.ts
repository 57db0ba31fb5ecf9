import { checkOrder } from './order';

describe('checkOrder', () => {
  it('accepts ascending lanes, gaps included (gaps are the ledger’s missing count)', () => {
    const report = checkOrder(
      new Map([
        [0, [1, 2, 5, 9]],
        [1, [3, 4]],
      ]),
    );
    expect(report).toEqual({ lanes: 2, deliveries: 6, violations: 0, firstViolations: [] });
  });

  it('counts each delivery that arrives after a later one of its lane', () => {
    const report = checkOrder(new Map([[7, [1, 3, 2, 4, 0]]]));
    expect(report.violations).toBe(2);
    expect(report.firstViolations).toEqual([
      { lane: 7, after: 3, got: 2 },
      { lane: 7, after: 4, got: 0 },
    ]);
  });

  it('never compares across lanes', () => {
    const report = checkOrder(
      new Map([
        [0, [10, 11]],
        [1, [1, 2]],
      ]),
    );
    expect(report.violations).toBe(0);
  });

  it('keeps only a few examples but counts all', () => {
    const report = checkOrder(new Map([[0, [100, 1, 2, 3, 4, 5, 6, 7]]]), 3);
    expect(report.violations).toBe(7);
    expect(report.firstViolations).toHaveLength(3);
  });
});
