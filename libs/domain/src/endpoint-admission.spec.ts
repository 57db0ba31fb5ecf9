import { CircuitPolicy, CircuitState, CLOSED } from './circuit-breaker';
import { admitAttempt } from './endpoint-admission';
import { TokenBucket } from './rate-limit';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const policy: CircuitPolicy = { failureThreshold: 3, cooldownMs: 30_000 };

const closed = (consecutiveFailures: number): CircuitState => ({
  state: 'closed',
  consecutiveFailures,
});
const open = (openedAt: number): CircuitState => ({
  state: 'open',
  openedAt,
  consecutiveFailures: 3,
});
const halfOpen = (probeStartedAt: number | null): CircuitState => ({
  state: 'half_open',
  probeStartedAt,
  consecutiveFailures: 3,
});
/** A bucket with `tokens` left, brought up to date at NOW. */
const bucket = (tokens: number): TokenBucket => ({ tokens, updatedAt: NOW });

type Input = Parameters<typeof admitAttempt>[0];
const admit = (over: Partial<Input> = {}) =>
  admitAttempt({
    circuit: CLOSED,
    circuitPolicy: policy,
    bucket: undefined,
    ratePerSecond: null,
    now: NOW,
    ...over,
  });

/** Circuits that let an attempt through now, and what each becomes once it is let through. */
const letThrough: [string, CircuitState, CircuitState][] = [
  ['closed', CLOSED, CLOSED],
  ['closed with failures counted', closed(2), closed(2)],
  ['open past its cooldown', open(NOW - 30_001), halfOpen(NOW)],
  ['half open with no probe out', halfOpen(null), halfOpen(NOW)],
  ['half open with a lost probe', halfOpen(NOW - 30_001), halfOpen(NOW)],
];
/** Circuits that refuse an attempt now, and when to ask again. */
const refusing: [string, CircuitState, number][] = [
  ['open within its cooldown', open(NOW - 1_000), NOW + 29_000],
  ['half open with its probe out', halfOpen(NOW - 100), NOW + 1_000],
];
/** Rate limits that have a token now. */
const withToken: [string, Partial<Input>][] = [
  ['no limit', { ratePerSecond: null }],
  ['a limit of 0 (none)', { ratePerSecond: 0 }],
  ['a limit and a new endpoint', { ratePerSecond: 5, bucket: undefined }],
  ['a limit and a token left', { ratePerSecond: 5, bucket: bucket(1) }],
];
const noToken: Partial<Input> = { ratePerSecond: 2, bucket: bucket(0) };

describe('admitAttempt', () => {
  describe.each(letThrough)('with a circuit %s', (_label, circuit, after) => {
    it.each(withToken)('admits with %s, counting the attempt', (_limit, rate) => {
      const result = admit({ circuit, ...rate });
      expect(result).toMatchObject({ verdict: 'admitted', circuit: after });
      if (result.verdict !== 'admitted') throw new Error('not admitted');
      if (rate.ratePerSecond) {
        // One token taken, the rest brought up to NOW.
        const before = rate.bucket ? rate.bucket.tokens : rate.ratePerSecond;
        expect(result.bucket).toEqual({ tokens: before - 1, updatedAt: NOW });
      } else {
        // No limit: the bucket is left as it was.
        expect(result.bucket).toBe(rate.bucket);
      }
    });

    it('refuses when the rate limit has no token, and leaves the circuit alone', () => {
      // Nothing in the refusal moves the circuit: a half-open circuit's probe stays free.
      expect(admit({ circuit, ...noToken })).toEqual({
        verdict: 'rate_limited',
        waitMs: 500,
        bucket: { tokens: 0, updatedAt: NOW },
      });
    });
  });

  describe.each(refusing)('with a circuit %s', (_label, circuit, retryAt) => {
    it.each([...withToken, ['no token', noToken] as [string, Partial<Input>]])(
      'refuses for the circuit first, whatever the rate limit (%s)',
      (_limit, rate) => {
        expect(admit({ circuit, ...rate })).toEqual({ verdict: 'circuit_open', retryAt });
      },
    );
  });

  it('takes no token for an attempt the circuit refuses', () => {
    const full = bucket(2);
    admit({ circuit: open(NOW), ratePerSecond: 2, bucket: full });
    expect(full).toEqual({ tokens: 2, updatedAt: NOW });
  });

  it('keeps a closed circuit as the very same state (no new object for a healthy endpoint)', () => {
    const circuit = closed(1);
    const result = admit({ circuit });
    expect(result.verdict === 'admitted' && result.circuit).toBe(circuit);
  });

  it('admits a rate-limited endpoint again once its wait has passed', () => {
    const refused = admit(noToken);
    if (refused.verdict !== 'rate_limited') throw new Error('expected a refusal');
    const later = admit({ ...noToken, bucket: refused.bucket, now: NOW + refused.waitMs });
    expect(later.verdict).toBe('admitted');
  });
});
