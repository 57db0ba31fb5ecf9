import { Inject, Injectable } from '@nestjs/common';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { Plan, PLANS, RateLimitedError, retryAfterSeconds } from '@hookbase/domain';

/** The limits a request can be refused by, as they are counted. */
export const LIMIT_NAMES = ['auth_failures', 'ingest', 'management', 'replay_failed'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/**
 * How many requests each limit refused since the process started. A small seam of its own so that
 * a metrics endpoint (there is none yet) can read it without knowing the limiters.
 */
@Injectable()
export class RefusalCounter {
  private readonly counts = new Map<LimitName, number>(LIMIT_NAMES.map((name) => [name, 0]));

  increment(limit: LimitName): void {
    this.counts.set(limit, (this.counts.get(limit) ?? 0) + 1);
  }

  snapshot(): Record<LimitName, number> {
    return Object.fromEntries(this.counts) as Record<LimitName, number>;
  }
}

/** Who a limit is charged to once an API key has proved valid. */
export interface LimitedPrincipal {
  keyId: string;
  organizationId: string;
  plan: Plan;
}

type PerPlan = Record<Plan, RateLimiterMemory>;

const perPlan = (points: Record<Plan, number>, durationSeconds: number, prefix: string): PerPlan =>
  Object.fromEntries(
    PLANS.map((plan) => [
      plan,
      new RateLimiterMemory({ points: points[plan], duration: durationSeconds, keyPrefix: prefix }),
    ]),
  ) as PerPlan;

/**
 * The abuse limits of one process (ADR 0015), counted in memory with rate-limiter-flexible in
 * fixed windows: failed authentications per client address and minute, events per API key and
 * second (ingest, REST and gRPC), management requests per API key and second, and replay-failed
 * copies per organization and minute. A refusal is a RateLimitedError (429 with Retry-After) and
 * is counted; a refused request uses none of its budget.
 */
@Injectable()
export class RequestLimits {
  private readonly authFailures: RateLimiterMemory;
  private readonly ingest: PerPlan;
  private readonly management: PerPlan;
  private readonly replayFailed: RateLimiterMemory;

  constructor(
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly refusals: RefusalCounter,
  ) {
    this.authFailures = new RateLimiterMemory({
      points: config.auth.failuresPerMinute,
      duration: 60,
      keyPrefix: 'auth',
    });
    this.ingest = perPlan(config.limits.ingestEventsPerSecond, 1, 'ingest');
    this.management = perPlan(config.limits.apiRequestsPerSecond, 1, 'api');
    this.replayFailed = new RateLimiterMemory({
      points: config.limits.replayFailed.perMinute,
      duration: 60,
      keyPrefix: 'replay',
    });
  }

  /** Refuses (429) a client address that has used up its failed authentications this minute. */
  async refuseIfBlocked(addressKey: string): Promise<void> {
    const used = await this.authFailures.get(addressKey);
    if (used && used.consumedPoints >= this.authFailures.points) {
      this.refusals.increment('auth_failures');
      throw new RateLimitedError(
        'Too many failed authentications from this address; retry later',
        retryAfterSeconds(used.msBeforeNext),
        { limit: 'auth_failures' },
      );
    }
  }

  /** Counts one failed authentication against the client address. */
  async recordFailure(addressKey: string): Promise<void> {
    await this.authFailures.penalty(addressKey, 1);
  }

  /** Takes `events` from the key's ingest budget this second, or refuses the whole request. */
  async takeIngest(principal: LimitedPrincipal, events: number): Promise<void> {
    await this.take(this.ingest[principal.plan], principal.keyId, events, 'ingest', () =>
      [
        `This API key may publish ${this.ingest[principal.plan].points} events per second`,
        `on plan ${principal.plan}; retry later`,
      ].join(' '),
    );
  }

  /** Takes one management request from the key's budget this second. */
  async takeManagement(principal: LimitedPrincipal): Promise<void> {
    await this.take(this.management[principal.plan], principal.keyId, 1, 'management', () =>
      [
        `This API key may make ${this.management[principal.plan].points} requests per second`,
        `on plan ${principal.plan}; retry later`,
      ].join(' '),
    );
  }

  /**
   * Takes up to `wanted` replay-failed copies from the organization's budget this minute and says
   * how many were granted (at least 1), or refuses when none is left. Give back what is not used.
   */
  async takeReplayFailed(organizationId: string, wanted: number): Promise<number> {
    const used = await this.replayFailed.get(organizationId);
    const left = this.replayFailed.points - (used?.consumedPoints ?? 0);
    const granted = Math.min(wanted, left);
    if (granted <= 0) {
      this.refusals.increment('replay_failed');
      throw new RateLimitedError(
        `This organization may replay ${this.replayFailed.points} failed messages per minute; retry later`,
        retryAfterSeconds(used?.msBeforeNext ?? 60_000),
        { limit: 'replay_failed' },
      );
    }
    await this.take(
      this.replayFailed,
      organizationId,
      granted,
      'replay_failed',
      () => 'Replays of failed messages are coming too fast; retry later',
    );
    return granted;
  }

  async giveBackReplayFailed(organizationId: string, unused: number): Promise<void> {
    if (unused > 0) await this.replayFailed.reward(organizationId, unused);
  }

  private async take(
    limiter: RateLimiterMemory,
    key: string,
    points: number,
    name: LimitName,
    message: () => string,
  ): Promise<void> {
    try {
      await limiter.consume(key, points);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      // A refused request keeps its budget: the points it would have used go back.
      await limiter.reward(key, points);
      this.refusals.increment(name);
      throw new RateLimitedError(message(), retryAfterSeconds(refusal.msBeforeNext), {
        limit: name,
      });
    }
  }
}
