import { fmtRatio as ratio } from '../../core/report';
import { targetVerdict, TARGETS } from './figures';

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

describe('fmtRatio', () => {
  it('divides, to two places, and shows a dash without a raw figure', () => {
    expect(ratio(7_321, 60_000)).toBe('0.12');
    expect(ratio(1, 0)).toBe('–');
    expect(ratio(Number.NaN, 10)).toBe('–');
  });
});
