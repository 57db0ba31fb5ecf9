import { unitFraction } from '../partitioner';

/** How the bench receiver answers one endpoint's requests. */
export interface EndpointBehaviour {
  /** Added before answering (the receiver's own processing time). */
  latencyMs: number;
  /** Share of messages whose attempt fails, 0..1. */
  failRate: number;
  /** An HTTP status to fail with, or a dropped connection. */
  failWith: number | 'drop';
  /** `first`: only a message's first attempt fails (later ones succeed); `all`: every attempt. */
  failAttempts: 'first' | 'all';
}

export const HEALTHY: EndpointBehaviour = Object.freeze({
  latencyMs: 0,
  failRate: 0,
  failWith: 503,
  failAttempts: 'first',
});

/** The behaviour --receiver-latency, --fail-rate and --fail-status ask for (first attempts fail). */
export const askedBehaviour = (options: {
  receiverLatencyMs: number;
  failRate: number;
  failWith: number | 'drop';
}): EndpointBehaviour => ({
  latencyMs: options.receiverLatencyMs,
  failRate: options.failRate,
  failWith: options.failWith,
  failAttempts: 'first',
});

export type ReceiverAnswer =
  { kind: 'respond'; status: number; delayMs: number } | { kind: 'drop'; delayMs: number };

/**
 * Which messages fail is decided from the message id (stable across retries), not by a coin
 * flip: the share is exact over many messages, the same message fails the same way on a rerun,
 * and a first-attempt failure is followed by a success however many dispatchers there are.
 */
export function answerFor(
  behaviour: EndpointBehaviour,
  request: { messageId: string; attempt: number },
): ReceiverAnswer {
  const selected = behaviour.failRate >= 1 || unitFraction(request.messageId) < behaviour.failRate;
  const fails = selected && (behaviour.failAttempts === 'all' || request.attempt <= 1);
  if (!fails) return { kind: 'respond', status: 200, delayMs: behaviour.latencyMs };
  if (behaviour.failWith === 'drop') return { kind: 'drop', delayMs: behaviour.latencyMs };
  return { kind: 'respond', status: behaviour.failWith, delayMs: behaviour.latencyMs };
}

/** Parses `--fail-status`: an HTTP status from 400 to 599, or `drop` (connection closed). */
export function parseFailWith(value: string, As: new (message: string) => Error = Error) {
  if (value === 'drop') return 'drop';
  const status = Number(value);
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    throw new As(`--fail-status must be an HTTP status 400..599 or "drop", got "${value}"`);
  }
  return status;
}
