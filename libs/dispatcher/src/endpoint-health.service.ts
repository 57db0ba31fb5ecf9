import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { GroupedWork, shouldAutoDisable, successNeedsWrite } from '@hookbase/domain';
import { OperationalEventPublisher } from '@hookbase/kafka';
import { EndpointEntity, EndpointRepository, type FailureStreak } from '@hookbase/persistence';
import type { EntityManager } from 'typeorm';

/** What an endpoint's health did after an attempt, for whoever reports it (operational events). */
export type HealthChange =
  | { kind: 'none' }
  | { kind: 'recovered'; failures: number }
  | { kind: 'failing'; consecutiveFailures: number; failingSince: Date }
  | { kind: 'disabled'; consecutiveFailures: number; failingSince: Date };

/**
 * Keeps each endpoint's failure streak and disables one that has only failed for its period
 * (the organization's, else HOOKBASE_AUTO_DISABLE_AFTER). Failures are written in one UPDATE for
 * those that end together (the streaks, the organizations' periods in the same round trip); a
 * success writes only when it ends a streak, or once a minute per endpoint, so the common path
 * costs next to nothing.
 */
@Injectable()
export class EndpointHealthService {
  private readonly logger = new Logger(EndpointHealthService.name);
  /**
   * What this process last wrote per endpoint (bounded): the last success, and whether a failure
   * came after it. The row an attempt was given may be older than both (read for a batch).
   */
  private readonly written = new Map<string, { lastSuccessAt: Date | null; failed: boolean }>();
  /**
   * Success writes due at the same moment go in one statement: endpoints that began together come
   * due together a minute later, and one write each (a thousand endpoints, a thousand statements
   * in a second) held the connection pool from the delivery path's own statements.
   */
  private readonly successes: GroupedWork<{ endpointId: string; at: Date }, void>;
  /**
   * Failure writes that come together go in one statement too: attempts that started together
   * (one event's messages, a burst of timeouts of a hanging receiver) fail together, and one
   * write each took the pool from the delivery path's statements in bursts.
   */
  private readonly failures: GroupedWork<
    { endpointId: string; at: Date },
    FailureStreak | undefined
  >;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly endpoints: EndpointRepository,
    @Optional() private readonly operational?: OperationalEventPublisher,
  ) {
    this.successes = new GroupedWork<{ endpointId: string; at: Date }, void>(async (items) => {
      await this.endpoints.recordSuccesses(items);
      return items.map(() => undefined);
    });
    this.failures = new GroupedWork(async (items) => {
      const streaks = await this.endpoints.recordFailures(items);
      return streaksOfEach(items, streaks);
    });
  }

  /**
   * The health change after an attempt, with the operational events it causes: failing (once per
   * streak, at HOOKBASE_OPERATIONAL_FAILING_AFTER failures), disabled, recovered.
   */
  async afterAttempt(
    endpoint: EndpointEntity,
    outcome: 'succeeded' | 'retry' | 'failed',
    now: Date,
  ): Promise<HealthChange> {
    const change = await this.track(endpoint, outcome, now);
    if (!this.operational) return change;
    const failingAfter = this.config.delivery.failingEventAfter;
    switch (change.kind) {
      case 'none':
        break;
      case 'recovered':
        await this.operational.emit('message.attempt.recovered', endpoint, {
          failures: change.failures,
        });
        break;
      case 'failing':
        if (change.consecutiveFailures === failingAfter) {
          await this.operational.emit('message.attempt.failing', endpoint, {
            consecutiveFailures: change.consecutiveFailures,
            failingSince: change.failingSince.toISOString(),
          });
        }
        break;
      case 'disabled':
        if (change.consecutiveFailures === failingAfter) {
          await this.operational.emit('message.attempt.failing', endpoint, {
            consecutiveFailures: change.consecutiveFailures,
            failingSince: change.failingSince.toISOString(),
          });
        }
        // endpoint.disabled went out with the change itself (track).
        break;
    }
    return change;
  }

  private async track(
    endpoint: EndpointEntity,
    outcome: 'succeeded' | 'retry' | 'failed',
    now: Date,
  ): Promise<HealthChange> {
    if (outcome === 'succeeded') return this.afterSuccess(endpoint, now);
    const [streak] = await this.failures.run([{ endpointId: endpoint.id, at: now }]);
    this.remember(endpoint.id, {
      lastSuccessAt: this.written.get(endpoint.id)?.lastSuccessAt ?? null,
      failed: true,
    });
    if (!streak) return { kind: 'none' };
    const periodMs = streak.autoDisableAfterMs ?? this.config.delivery.autoDisableAfterMs;
    if (
      shouldAutoDisable({ status: streak.status, failingSince: streak.failingSince, periodMs, now })
    ) {
      const cutoff = new Date(now.getTime() - periodMs!);
      const operational = this.operational;
      // The event is written in the transaction of the change (the outbox).
      const tell = operational
        ? (tx: EntityManager) =>
            operational.emitAll(
              'endpoint.disabled',
              [
                {
                  subject: endpoint,
                  data: {
                    reason: 'failing',
                    consecutiveFailures: streak.consecutiveFailures,
                    failingSince: streak.failingSince.toISOString(),
                  },
                },
              ],
              now,
              tx,
            )
        : undefined;
      if (await this.endpoints.autoDisable(endpoint.id, cutoff, now, tell)) {
        this.logger.warn(
          `endpoint ${endpoint.id} disabled: ${streak.consecutiveFailures} failed attempts since ${streak.failingSince.toISOString()}`,
        );
        return { kind: 'disabled', ...streak };
      }
    }
    return { kind: 'failing', ...streak };
  }

  private async afterSuccess(endpoint: EndpointEntity, now: Date): Promise<HealthChange> {
    const mine = this.written.get(endpoint.id);
    const failures = mine ? (mine.failed ? 1 : 0) : endpoint.consecutiveFailures;
    const lastSuccessAt =
      mine?.lastSuccessAt &&
      (!endpoint.lastSuccessAt || mine.lastSuccessAt > endpoint.lastSuccessAt)
        ? mine.lastSuccessAt
        : endpoint.lastSuccessAt;
    if (!successNeedsWrite({ consecutiveFailures: failures, lastSuccessAt, now })) {
      return { kind: 'none' };
    }
    // Noted before the write, so that the successes finishing meanwhile do not write it again;
    // put back if the write fails, so that the next success tries again.
    this.remember(endpoint.id, { lastSuccessAt: now, failed: false });
    try {
      await this.successes.run([{ endpointId: endpoint.id, at: now }]);
    } catch (error) {
      if (mine) this.remember(endpoint.id, mine);
      else this.written.delete(endpoint.id);
      throw error;
    }
    return failures > 0 ? { kind: 'recovered', failures } : { kind: 'none' };
  }

  private remember(endpointId: string, state: { lastSuccessAt: Date | null; failed: boolean }) {
    if (this.written.size >= 10_000 && !this.written.has(endpointId)) this.written.clear();
    this.written.set(endpointId, state);
  }
}

/**
 * Each failure's streak, given the streaks after all of them: an endpoint with n failures in the
 * write counts them in the order given, so the k-th of them (from 1) has the streak it had before
 * plus k, as if each had been written alone.
 */
export function streaksOfEach(
  items: readonly { endpointId: string }[],
  after: ReadonlyMap<string, FailureStreak>,
): (FailureStreak | undefined)[] {
  const remaining = new Map<string, number>();
  for (const { endpointId } of items)
    remaining.set(endpointId, (remaining.get(endpointId) ?? 0) + 1);
  return items.map(({ endpointId }) => {
    const streak = after.get(endpointId);
    const later = remaining.get(endpointId)! - 1;
    remaining.set(endpointId, later);
    return streak && { ...streak, consecutiveFailures: streak.consecutiveFailures - later };
  });
}
