import { circuitGate, CircuitPolicy, CircuitState } from './circuit-breaker';
import { takeToken, TokenBucket } from './rate-limit';

/**
 * Endpoint admission: may an attempt start at an endpoint now? One rule for every path (unordered
 * messages, retries, FIFO heads), checked in one fixed order: first the circuit breaker, then the
 * rate limit. Nothing is taken unless the attempt is let through: a message refused by the rate
 * limit leaves the circuit as it was (a half-open circuit's probe stays free for the attempt that
 * really goes), and one refused by the circuit takes no token.
 */
export type Admission =
  /** Go now. `circuit` and `bucket` are the endpoint's states with this attempt counted. */
  | { verdict: 'admitted'; circuit: CircuitState; bucket: TokenBucket | undefined }
  /** The circuit is open (or its probe is out): nothing may start before `retryAt`. */
  | { verdict: 'circuit_open'; retryAt: number }
  /**
   * The rate limit has no token now: one comes in `waitMs`. `bucket` is the endpoint's bucket
   * brought up to now (nothing taken).
   */
  | { verdict: 'rate_limited'; waitMs: number; bucket: TokenBucket };

export function admitAttempt(input: {
  circuit: CircuitState;
  circuitPolicy: CircuitPolicy;
  /** The endpoint's token bucket; undefined before its first attempt. */
  bucket: TokenBucket | undefined;
  /** The endpoint's rateLimitPerSecond; null or 0: no limit. */
  ratePerSecond: number | null;
  now: number;
}): Admission {
  const { circuit, bucket, ratePerSecond, now } = input;
  // A closed circuit lets everything through unchanged: no gate to ask (the common case).
  let next = circuit;
  if (circuit.state !== 'closed') {
    const gate = circuitGate(circuit, now, input.circuitPolicy);
    if (!gate.allowed) return { verdict: 'circuit_open', retryAt: gate.retryAt };
    next = gate.next;
  }
  if (!ratePerSecond) return { verdict: 'admitted', circuit: next, bucket };
  const grant = takeToken(bucket, ratePerSecond, now);
  if (!grant.granted) {
    return { verdict: 'rate_limited', waitMs: grant.waitMs, bucket: grant.bucket };
  }
  return { verdict: 'admitted', circuit: next, bucket: grant.bucket };
}
