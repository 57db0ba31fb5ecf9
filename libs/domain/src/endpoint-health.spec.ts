import {
  LAST_SUCCESS_WRITE_INTERVAL_MS,
  parseDuration,
  shouldAutoDisable,
  successNeedsWrite,
} from './endpoint-health';

describe('shouldAutoDisable', () => {
  const now = new Date('2026-01-10T00:00:00Z');
  const since = (ms: number) => new Date(now.getTime() - ms);

  it('disables an active endpoint failing for the whole period, not a moment before', () => {
    expect(
      shouldAutoDisable({ status: 'active', failingSince: since(1000), periodMs: 1000, now }),
    ).toBe(true);
    expect(
      shouldAutoDisable({ status: 'active', failingSince: since(999), periodMs: 1000, now }),
    ).toBe(false);
  });

  it('never without a streak, with the rule off, or for a paused or disabled endpoint', () => {
    expect(shouldAutoDisable({ status: 'active', failingSince: null, periodMs: 1, now })).toBe(
      false,
    );
    expect(
      shouldAutoDisable({ status: 'active', failingSince: since(1e9), periodMs: null, now }),
    ).toBe(false);
    for (const status of ['paused', 'disabled']) {
      expect(shouldAutoDisable({ status, failingSince: since(1e9), periodMs: 1, now })).toBe(false);
    }
  });
});

describe('successNeedsWrite', () => {
  const now = new Date('2026-01-10T00:00:00Z');

  it('writes a success that ends a streak or is the first, else once per interval', () => {
    expect(successNeedsWrite({ consecutiveFailures: 1, lastSuccessAt: now, now })).toBe(true);
    expect(successNeedsWrite({ consecutiveFailures: 0, lastSuccessAt: null, now })).toBe(true);
    expect(
      successNeedsWrite({
        consecutiveFailures: 0,
        lastSuccessAt: new Date(now.getTime() - 1000),
        now,
      }),
    ).toBe(false);
    expect(
      successNeedsWrite({
        consecutiveFailures: 0,
        lastSuccessAt: new Date(now.getTime() - LAST_SUCCESS_WRITE_INTERVAL_MS),
        now,
      }),
    ).toBe(true);
  });
});

describe('parseDuration', () => {
  it('reads each unit and off, and refuses anything else', () => {
    expect(parseDuration('5d')).toBe(432_000_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1500ms')).toBe(1500);
    expect(parseDuration(' OFF ')).toBeNull();
    for (const bad of ['', '5', '5 days', '-1d', '1.5h'])
      expect(parseDuration(bad)).toBeUndefined();
  });
});
