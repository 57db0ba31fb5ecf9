import { rawTargetRow, ratio, targetVerdict, TARGETS } from './figures';

const step = (label: string, acceptedPerSecond: number, p99Ms: number | null) => ({
  label,
  acceptedPerSecond,
  p99Ms,
});

describe('targetVerdict', () => {
  it('is met by a step at the rate with its p99 under the bound', () => {
    const verdict = targetVerdict(
      [step('8 in flight', 6_000, 12), step('32 in flight', 11_000, 40)],
      TARGETS.single,
    );
    expect(verdict.met).toBe(true);
    expect(verdict.within?.label).toBe('32 in flight');
    expect(verdict.text).toMatch(/MET, 11,000\/s at 32 in flight \(p99 40\.0 ms\)/);
  });

  it('does not count throughput bought with latency beyond the bound', () => {
    const verdict = targetVerdict(
      [step('32 in flight', 8_000, 45), step('128 in flight', 12_000, 80)],
      TARGETS.single,
    );
    expect(verdict.met).toBe(false);
    expect(verdict.within?.label).toBe('32 in flight');
    expect(verdict.text).toContain('MISSED by 2,000/s (20 % short)');
    expect(verdict.text).toContain('fastest overall 12,000/s at 128 in flight (p99 80.0 ms)');
  });

  it('says so when no step was within the latency bound', () => {
    const verdict = targetVerdict([step('a', 60_000, 50), step('b', 1, null)], TARGETS.batch);
    expect(verdict).toMatchObject({ met: false, within: null });
    expect(verdict.text).toMatch(/no step had p99 < 50 ms; fastest overall 60,000\/s at a/);
    expect(targetVerdict([], TARGETS.batch).met).toBe(false);
  });
});

describe('ratio', () => {
  it('divides, to two places, and shows a dash without a raw figure', () => {
    expect(ratio(7_321, 60_000)).toBe('0.12');
    expect(ratio(1, 0)).toBe('–');
    expect(ratio(Number.NaN, 10)).toBe('–');
  });
});

describe('rawTargetRow', () => {
  const target = { eventsPerSecond: 50_000, p99Ms: 50 };

  it('says when the target is above the raw produce rate', () => {
    const rows = rawTargetRow(target, 43_601);
    expect(rows).toHaveLength(1);
    expect(rows[0][0]).toBe('target vs raw produce');
    expect(rows[0][1]).toMatch(/50,000\/s\) is above the raw Kafka produce rate \(43,601\/s\)/);
  });

  it('is empty when raw produce reached the target, or was not measured', () => {
    expect(rawTargetRow(target, 50_000)).toEqual([]);
    expect(rawTargetRow(target, 63_000)).toEqual([]);
    expect(rawTargetRow(target, 0)).toEqual([]);
    expect(rawTargetRow(target, Number.NaN)).toEqual([]);
  });
});
