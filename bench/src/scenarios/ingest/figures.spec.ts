import { fmtRatio as ratio } from '../../core/report';
import { targetVerdict, TARGETS } from './figures';

const step = (
  label: string,
  acceptedPerSecond: number,
  p99Ms: number | null,
  boundPerSecond: number | null = 20_000,
) => ({ label, acceptedPerSecond, p99Ms, boundPerSecond });

describe('targetVerdict', () => {
  it('is met by a step reaching the share of its own bound with its p99 under the limit', () => {
    const verdict = targetVerdict(
      [step('8 in flight', 6_000, 12, 15_000), step('32 in flight', 11_000, 40, 21_000)],
      TARGETS.single,
    );
    expect(verdict.met).toBe(true);
    expect(verdict.within?.label).toBe('32 in flight');
    expect(verdict.text).toBe(
      'accepted ≥ 0.5 of the bare HTTP bound with p99 < 50 ms: MET, 0.52 at 32 in flight (11,000/s of 21,000/s, p99 40.0 ms)',
    );
  });

  it('judges each step against its own bound: the best ratio, not the best rate', () => {
    const verdict = targetVerdict(
      [step('8 in flight', 5_000, 10, 8_000), step('128 in flight', 9_000, 30, 27_000)],
      TARGETS.single,
    );
    expect(verdict.met).toBe(true);
    expect(verdict.within?.label).toBe('8 in flight');
  });

  it('does not count a ratio bought with latency beyond the limit', () => {
    const verdict = targetVerdict(
      [step('32 in flight', 8_000, 45), step('128 in flight', 12_000, 80)],
      TARGETS.single,
    );
    expect(verdict.met).toBe(false);
    expect(verdict.text).toContain('MISSED, best within the limit 0.40 at 32 in flight');
    expect(verdict.text).toContain('best overall 0.60 at 128 in flight (12,000/s of 20,000/s');
  });

  it('says so when no step was within the limit, or no bound was measured', () => {
    const raw = 60_000;
    const verdict = targetVerdict(
      [step('a', 50_000, 50, raw), step('b', 1, null, raw)],
      TARGETS.batch,
    );
    expect(verdict).toMatchObject({ met: false, within: null });
    expect(verdict.text).toMatch(
      /^accepted ≥ 0.8 of the raw produce bound with p99 < 50 ms: MISSED, no step had p99 < 50 ms; best overall 0.83 at a/,
    );
    expect(targetVerdict([step('a', 9, 1, null)], TARGETS.single).text).toContain(
      'not judged, no bare HTTP bound was measured',
    );
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
