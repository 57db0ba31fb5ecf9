import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  admitAttempt,
  circuitAfterAttempt,
  CircuitPolicy,
  CircuitState,
  CLOSED,
  TokenBucket,
} from '@hookbase/domain';
import {
  DeliveryMetrics,
  HookbaseMetrics,
  METRICS,
  NO_METRICS,
  ScrapeSource,
} from '@hookbase/runtime';
import { DISPATCH_SLOTS, DispatchSlots } from './dispatch-pool';
import { EndpointLine } from './endpoint-line';

/** Rate-limit waits up to this long happen in line; longer ones hold the message instead. */
const MAX_INLINE_RATE_WAIT_MS = 1_000;
/**
 * A message whose organization holds its whole share of the dispatch pool waits up to this long
 * for a slot in line; then the caller holds it on the retry schedule (no attempt used), so it
 * neither fills its partition's window nor holds the partition's committed offset meanwhile.
 */
const MAX_SHARE_WAIT_MS = 1_000;
/** How long a message that found no slot in its organization's share is held. */
const SHARE_HOLD_MS = 1_000;

/** The endpoint as its guards read it. */
export interface GuardedEndpoint {
  id: string;
  rateLimitPerSecond: number | null;
}

/** Why an attempt may not start now, and when to ask again. */
export interface Refusal {
  reason: 'circuit_open' | 'rate_limited';
  until: Date;
}

export type AttemptResult = 'succeeded' | 'retry' | 'failed';

/** Admission of an attempt at an endpoint, and the attempt's result reported back. */
export interface EndpointAdmission {
  /**
   * May an attempt start at the endpoint now? Checks its circuit breaker, then its rate limit (the
   * rule is `admitAttempt`); a short rate-limit wait happens here. `true`: go now, the probe or
   * token is taken. Otherwise nothing is taken and the refusal says until when.
   */
  admit(endpoint: GuardedEndpoint): Promise<true | Refusal>;
  /** Moves the endpoint's circuit breaker on by the outcome of an attempt it admitted. */
  afterAttempt(endpointId: string, outcome: AttemptResult): void;
}

/** What a FIFO lane needs of the guards: admission, its circuit to wait on, and a pool slot. */
export interface LaneGuards extends EndpointAdmission {
  readonly circuitPolicy: CircuitPolicy;
  circuitOf(endpointId: string): CircuitState;
  /**
   * Runs a task in one of the organization's slots of the process-wide pool of attempts in
   * flight, waiting as long as it takes (a waiting lane holds no offsets).
   */
  withDispatchSlot<T>(organizationId: string, task: () => Promise<T>): Promise<T>;
}

/** Whose concurrency a message counts against. */
export interface ConcurrencyKey {
  endpointId: string;
  organizationId: string;
}

/** What the unordered path needs of the guards: admission within bounded concurrency. */
export interface DeliveryGuards extends EndpointAdmission {
  /**
   * Runs `task` within the endpoint's concurrency limit and a slot of the organization's share of
   * the pool. Runs `hold` instead, with the time the message should come again (the caller holds
   * it without using an attempt), when it waited too long behind the endpoint's own attempts (a
   * slow endpoint's backlog), or when its organization already holds its share and no slot came
   * in time.
   */
  withinConcurrency<D extends ConcurrencyKey>(
    delivery: D,
    task: () => Promise<void>,
    hold: (delivery: D, until: Date) => Promise<unknown>,
  ): Promise<void>;
}

/**
 * The guards of the endpoints this dispatcher owns (those keyed to its partitions, and what its
 * retry loop claims): circuit breakers, rate limits and concurrency, in this process's memory
 * (ADR 0007). One order for every path: a concurrency slot first (so a message waiting for one
 * holds neither a token nor a probe), then `admit`: circuit, then rate limit.
 */
@Injectable()
export class EndpointGuards implements LaneGuards, DeliveryGuards, ScrapeSource, OnModuleInit {
  private readonly logger = new Logger(EndpointGuards.name);
  private readonly circuits = new Map<string, CircuitState>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly perEndpoint = new Map<string, { line: EndpointLine; users: number }>();
  readonly circuitPolicy: CircuitPolicy;
  private readonly endpointConcurrency: number;
  private readonly endpointQueueWaitMs: number;

  constructor(
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    @Inject(DISPATCH_SLOTS) private readonly slots: DispatchSlots,
    @Optional() @Inject(METRICS) private readonly metrics: DeliveryMetrics = NO_METRICS,
    @Optional() private readonly catalog?: HookbaseMetrics,
  ) {
    this.circuitPolicy = config.delivery.circuit;
    this.endpointConcurrency = config.delivery.endpointConcurrency;
    this.endpointQueueWaitMs = config.delivery.endpointQueueWaitMs;
  }

  onModuleInit(): void {
    this.catalog?.addScrapeSource(this);
  }

  /** The circuits this process holds open or half-open, at each scrape. */
  async collect(metrics: HookbaseMetrics): Promise<void> {
    let open = 0;
    let halfOpen = 0;
    for (const circuit of this.circuits.values()) {
      if (circuit.state === 'open') open++;
      else if (circuit.state === 'half_open') halfOpen++;
    }
    metrics.circuits.set({ state: 'open' }, open);
    metrics.circuits.set({ state: 'half_open' }, halfOpen);
  }

  async admit(endpoint: GuardedEndpoint): Promise<true | Refusal> {
    for (;;) {
      const now = Date.now();
      const admission = admitAttempt({
        circuit: this.circuitOf(endpoint.id),
        circuitPolicy: this.circuitPolicy,
        bucket: this.buckets.get(endpoint.id),
        ratePerSecond: endpoint.rateLimitPerSecond,
        now,
      });
      switch (admission.verdict) {
        case 'admitted':
          this.setCircuit(endpoint.id, admission.circuit);
          if (admission.bucket) this.buckets.set(endpoint.id, admission.bucket);
          return true;
        case 'circuit_open':
          return { reason: 'circuit_open', until: new Date(admission.retryAt) };
        case 'rate_limited':
          this.buckets.set(endpoint.id, admission.bucket);
          if (admission.waitMs > MAX_INLINE_RATE_WAIT_MS) {
            this.metrics.rateLimitedWait('held');
            return { reason: 'rate_limited', until: new Date(now + admission.waitMs) };
          }
          this.metrics.rateLimitedWait('in_line');
          await new Promise((resolve) => setTimeout(resolve, admission.waitMs));
          break;
        default: {
          const unreachable: never = admission;
          throw new Error(`unknown admission ${JSON.stringify(unreachable)}`);
        }
      }
    }
  }

  afterAttempt(endpointId: string, outcome: AttemptResult): void {
    const result =
      outcome === 'succeeded' ? 'success' : outcome === 'retry' ? 'failure' : 'neutral';
    const before = this.circuitOf(endpointId);
    const next = circuitAfterAttempt(before, result, Date.now(), this.circuitPolicy);
    if (next.state === 'open' && before.state !== 'open') {
      this.logger.warn(
        `circuit opened for endpoint ${endpointId} after ${next.consecutiveFailures} failures`,
      );
    }
    this.setCircuit(endpointId, next);
  }

  circuitOf(endpointId: string): CircuitState {
    return this.circuits.get(endpointId) ?? CLOSED;
  }

  private setCircuit(endpointId: string, state: CircuitState): void {
    // Healthy endpoints keep no entry, so the map grows only with troubled ones.
    if (state.state === 'closed' && state.consecutiveFailures === 0)
      this.circuits.delete(endpointId);
    else this.circuits.set(endpointId, state);
  }

  withDispatchSlot<T>(organizationId: string, task: () => Promise<T>): Promise<T> {
    return this.slots.run(organizationId, task);
  }

  async withinConcurrency<D extends ConcurrencyKey>(
    delivery: D,
    task: () => Promise<void>,
    hold: (delivery: D, until: Date) => Promise<unknown>,
  ): Promise<void> {
    const { endpointId, organizationId } = delivery;
    let slot = this.perEndpoint.get(endpointId);
    if (!slot) {
      slot = {
        line: new EndpointLine(this.endpointConcurrency, this.endpointQueueWaitMs),
        users: 0,
      };
      this.perEndpoint.set(endpointId, slot);
    }
    const { line } = slot;
    slot.users++;
    let turn;
    try {
      turn = await line.run(() =>
        this.slots.runWithinShare(organizationId, () => line.attempt(task), MAX_SHARE_WAIT_MS),
      );
    } finally {
      if (--slot.users === 0) this.perEndpoint.delete(endpointId);
    }
    if (!turn.ran) {
      this.metrics.backlogHeld();
      await hold(delivery, turn.until);
    } else if (!turn.value.ran) {
      this.metrics.shareHeld();
      await hold(delivery, new Date(Date.now() + SHARE_HOLD_MS));
    }
  }
}
