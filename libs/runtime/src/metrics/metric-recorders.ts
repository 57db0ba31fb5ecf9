/**
 * The narrow interfaces through which the services count what they do. Each is implemented by the
 * metrics catalog (HookbaseMetrics) and injected under METRICS, so a unit test replaces it with
 * a plain object, and code that is not given one counts nothing (NO_METRICS).
 */

import type { DeliveryEvent, TransitionSkipReason } from '@hookbase/domain';

export const METRICS = Symbol('METRICS');

/** Where an event came in. */
export type IngestSurface = 'rest' | 'batch' | 'grpc' | 'kafka';

export interface IngestMetrics {
  /** Kafka acknowledged the event (`acked`), did not in time (`timeout`), or refused (`error`). */
  publishFinished(outcome: 'acked' | 'timeout' | 'error', seconds: number): void;
  eventsAccepted(surface: IngestSurface, count: number): void;
  eventsRefused(surface: IngestSurface, reason: string, count: number): void;
}

export interface FanoutMetrics {
  eventsFannedOut(events: number, messages: number): void;
}

export interface DeliveryMetrics {
  attemptFinished(attempt: {
    kind: string;
    outcome: 'succeeded' | 'retry' | 'failed';
    responseStatus: number | null;
    endpointId: string;
    seconds: number;
  }): void;
  deadLettered(reason: string, count: number): void;
  /** An endpoint's rate limit made an attempt wait: in line (short), or held for later. */
  rateLimitedWait(outcome: 'in_line' | 'held'): void;
  /**
   * A message found no slot of the dispatch pool in time while its organization held its share,
   * and is held on the retry schedule (no attempt used).
   */
  shareHeld(): void;
  /**
   * A message waited too long behind its endpoint's own attempts in flight (a slow endpoint's
   * backlog) and is held on the retry schedule until the endpoint can take it (no attempt used).
   */
  backlogHeld(): void;
}

export interface TransitionMetrics {
  /** A delivery state write left `count` messages alone (their state did not allow `transition`). */
  transitionsSkipped(transition: DeliveryEvent, reason: TransitionSkipReason, count: number): void;
}

/** Everything the catalog records; what the services are given is one of the parts. */
export type MetricRecorders = IngestMetrics & FanoutMetrics & DeliveryMetrics & TransitionMetrics;

/** Counts nothing: for code built without the catalog (unit tests, tools). */
export const NO_METRICS: MetricRecorders = Object.freeze({
  publishFinished: () => undefined,
  eventsAccepted: () => undefined,
  eventsRefused: () => undefined,
  eventsFannedOut: () => undefined,
  attemptFinished: () => undefined,
  deadLettered: () => undefined,
  rateLimitedWait: () => undefined,
  shareHeld: () => undefined,
  backlogHeld: () => undefined,
  transitionsSkipped: () => undefined,
});
