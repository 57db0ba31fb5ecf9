import { DispatchShares } from '@hookbase/domain';
import type { HookbaseMetrics, ScrapeSource } from '@hookbase/runtime';

/** What a bounded wait for a slot came to: the task's result, or no slot in time (not run). */
export type SlotOutcome<T> = { ran: true; value: T } | { ran: false };

/**
 * The dispatcher's process-wide bound on attempts in flight, shared between organizations (the
 * rule is `DispatchShares`). The narrow interface `DeliveryService` and the FIFO lanes use, so a
 * test can put another in its place.
 */
export interface DispatchSlots {
  /** Runs `task` in one of the organization's slots, waiting as long as it takes. */
  run<T>(organizationId: string, task: () => Promise<T>): Promise<T>;
  /**
   * Runs `task` in one of the organization's slots. When no slot came within `maxWaitMs` and the
   * organization already holds its share (it waits because of its own attempts, not because the
   * pool is busy), gives up without running it.
   */
  runWithinShare<T>(
    organizationId: string,
    task: () => Promise<T>,
    maxWaitMs: number,
  ): Promise<SlotOutcome<T>>;
}

/** Nest token for the dispatcher's `DispatchSlots`. */
export const DISPATCH_SLOTS = Symbol('DISPATCH_SLOTS');

interface Waiter {
  grant(): void;
}

/**
 * `DispatchSlots` in this process's memory: waiters are promises, the rule decides who goes. At a
 * scrape it reports its slots in use and free, and its waiters.
 */
export class DispatchPool implements DispatchSlots, ScrapeSource {
  private readonly shares: DispatchShares<Waiter>;

  constructor(capacity: number, share: number) {
    this.shares = new DispatchShares<Waiter>(capacity, share);
  }

  async run<T>(organizationId: string, task: () => Promise<T>): Promise<T> {
    await this.acquire(organizationId, Infinity);
    return this.holding(organizationId, task);
  }

  async runWithinShare<T>(
    organizationId: string,
    task: () => Promise<T>,
    maxWaitMs: number,
  ): Promise<SlotOutcome<T>> {
    if (!(await this.acquire(organizationId, maxWaitMs))) return { ran: false };
    return { ran: true, value: await this.holding(organizationId, task) };
  }

  async collect(metrics: HookbaseMetrics): Promise<void> {
    const inUse = this.shares.inUse();
    metrics.dispatchPoolSlots.set({ state: 'in_use' }, inUse);
    metrics.dispatchPoolSlots.set({ state: 'free' }, this.shares.capacity - inUse);
    metrics.dispatchPoolWaiting.set(this.shares.waitingCount());
  }

  /** Slots in use, by everyone or by one organization. */
  inUse(organizationId?: string): number {
    return this.shares.inUse(organizationId);
  }

  /** Requests waiting for a slot, by everyone or by one organization. */
  waiting(organizationId?: string): number {
    return this.shares.waitingCount(organizationId);
  }

  private async holding<T>(organizationId: string, task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } finally {
      for (const next of this.shares.release(organizationId)) next.grant();
    }
  }

  /** True once a slot is held; false when the wait gave up (only while at the share). */
  private acquire(organizationId: string, maxWaitMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      if (this.shares.request(organizationId, waiter)) return resolve(true);
      if (!Number.isFinite(maxWaitMs)) return;
      const check = () => {
        // Waiting for the pool as a whole is not the organization's doing: wait on.
        if (this.shares.inUse(organizationId) < this.shares.share) {
          timer = setTimeout(check, maxWaitMs);
          return;
        }
        if (this.shares.withdraw(organizationId, waiter)) resolve(false);
      };
      timer = setTimeout(check, maxWaitMs);
    });
  }
}
