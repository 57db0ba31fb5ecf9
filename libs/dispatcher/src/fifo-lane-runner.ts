import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  Backoff,
  backoffDelay,
  laneLeaseLapsing,
  laneRenewEveryMs,
  laneWindowBytes,
} from '@hookbase/domain';
import { EndpointRepository, FifoLaneRepository } from '@hookbase/persistence';
import { Drainable, DrainsOnShutdown, settledBy } from '@hookbase/runtime';
import { Attempts, AttemptService } from './attempt.service';
import { DeadLetters, DeadLetterService } from './dead-letter.service';
import { EndpointGuards, LaneGuards } from './endpoint-guards';
import { EventPayloads, PayloadReads } from './event-payloads';
import { GroupedLaneStore } from './grouped-lane-store';
import { forget, LaneHandle, LaneProgress, settle } from './lane-handle';
import { LANES_READ_AHEAD_BYTES, LaneSteps, READ_AHEAD, READ_AHEAD_BYTES } from './lane-steps';

/** A lane whose step failed (the store, a lost read) tries again after this. */
const LANE_STEP_RETRY: Backoff = { baseMs: 100, maxMs: 5_000, growth: 'doubling' };
/** Lanes taken per sweep. */
const SWEEP_BATCH = 200;

/**
 * Runs FIFO lanes (ADR 0009). A lane is an endpoint's ordered queue, parked in PostgreSQL by the
 * dispatcher consumer; the worker holding the lane's lease delivers its head, one message at a
 * time, and moves on only once the head has finished (succeeded or dead-lettered). This class
 * keeps the lanes of this process: it starts a lane when messages are queued in it, holds and
 * renews the leases, takes over lanes no worker holds (after a stop, or a lease that ran out
 * because its worker died) by a periodic sweep, and hands its lanes back on an orderly stop. What
 * a lane does at each step is `LaneSteps`'s. A lane whose queue empties gives its lease up.
 */
@Injectable()
@DrainsOnShutdown()
export class FifoLaneRunner implements OnApplicationBootstrap, OnApplicationShutdown, Drainable {
  private readonly logger = new Logger(FifoLaneRunner.name);
  private readonly owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly lanes = new Map<string, LaneHandle>();
  private stopping = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  readonly drainName = 'FIFO lanes';
  /** The lanes' store calls, grouped across this process's lanes. */
  private readonly laneStore: GroupedLaneStore;
  /** What each running lane does, a step at a time. */
  private readonly steps: LaneSteps;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly store: FifoLaneRepository,
    endpoints: EndpointRepository,
    @Inject(EventPayloads) payloads: PayloadReads,
    @Inject(EndpointGuards) guards: LaneGuards,
    @Inject(AttemptService) attempts: Attempts,
    @Inject(DeadLetterService) deadLetters: DeadLetters,
  ) {
    this.laneStore = new GroupedLaneStore(store, endpoints, this.owner, config.fifo.leaseMs, {
      messages: READ_AHEAD,
      bytes: () => laneWindowBytes(this.lanes.size, READ_AHEAD_BYTES, LANES_READ_AHEAD_BYTES),
    });
    this.steps = new LaneSteps({
      config,
      store,
      laneStore: this.laneStore,
      owner: this.owner,
      payloads,
      guards,
      attempts,
      deadLetters,
    });
  }

  onApplicationBootstrap(): void {
    this.sweepTimer = setInterval(() => {
      this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    }, this.config.fifo.sweepMs);
    this.renewTimer = setInterval(
      () => void this.renew(),
      laneRenewEveryMs(this.config.fifo.leaseMs),
    );
  }

  /**
   * An orderly stop: no lane is started or taken any more, each running lane finishes the head it
   * is sending (until the deadline) and stops, and the lanes that stopped are handed back at once
   * (lease released), so another dispatcher's sweep takes them within HOOKBASE_FIFO_SWEEP_MS
   * instead of after the lease. A lane whose head is still being sent at the deadline keeps its
   * lease (renewals stop): its next owner sends that head again once the lease has run out, as
   * after a crash, never while it may still be in flight here.
   */
  drain(deadline: number): Promise<void> {
    this.stopped ??= this.stop(deadline);
    return this.stopped;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.drain(Date.now() + 10_000);
  }

  private async stop(deadline: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.sweepTimer);
    await this.sweeping;
    const running = [...this.lanes.entries()];
    running.forEach(([, lane]) => lane.wake());
    const stopped = new Set<string>();
    await Promise.all(
      running.map(async ([endpointId, lane]) => {
        if (await settledBy(lane.done, deadline)) stopped.add(endpointId);
      }),
    );
    // Lanes still sending keep their lease until it runs out: no renewal from here on.
    clearInterval(this.renewTimer);
    const kept = running.map(([endpointId]) => endpointId).filter((id) => !stopped.has(id));
    // Every other lane this process holds is handed back, a lane that ended here without giving
    // its lease up (its run failed) included: nothing of it is under way any more.
    try {
      const handedBack = await this.store.releaseAllExcept(this.owner, kept);
      this.logger.log(
        `handed back ${handedBack.length} FIFO lanes` +
          (kept.length > 0
            ? `; ${kept.length} still sending keep their lease until it runs out`
            : ''),
      );
    } catch (error) {
      this.logger.warn(
        `could not hand the FIFO lanes back (they wait for their lease): ${(error as Error).message}`,
      );
    }
  }

  /** Messages were queued in these lanes: run each one here unless it already runs somewhere. */
  wake(endpointIds: Iterable<string>): void {
    for (const endpointId of endpointIds) {
      if (this.stopping) return;
      const running = this.lanes.get(endpointId);
      // A running lane may be giving its lease up on a queue read before these were queued: it
      // starts again once it has (see `start`).
      if (running) {
        running.woken = true;
        // Only a lingering lane is interrupted: one that waits for a retry or the circuit keeps
        // waiting (it reads its queue when it wakes in any case).
        if (running.lingering) running.wake();
      } else this.start(endpointId);
    }
  }

  private start(endpointId: string): void {
    const lane = new LaneHandle();
    this.lanes.set(endpointId, lane);
    lane.done = this.run(endpointId, lane)
      .catch((error: Error) => {
        // The lease stays until it runs out; the sweep of some worker takes the lane again.
        this.logger.error(`lane ${endpointId} stopped: ${error.message}`);
        return false;
      })
      .then((released) => {
        this.lanes.delete(endpointId);
        // Woken while it was ending: the messages may have been queued after its last read.
        if (released && lane.woken && !this.stopping) this.start(endpointId);
      })
      .finally(() => {
        if (this.lanes.get(endpointId) === lane) this.lanes.delete(endpointId);
      });
  }

  /** Runs the lane while this process holds its lease; true when it ended by giving it up. */
  private async run(endpointId: string, lane: LaneHandle): Promise<boolean> {
    const asked = Date.now();
    if (!(await this.laneStore.acquire(endpointId))) return false;
    lane.acquired = true;
    lane.leaseConfirmedAt = asked;
    const state: LaneProgress = {
      window: [],
      readWholeQueue: false,
      lingered: false,
      saidBlocked: false,
    };
    try {
      return await this.loop(endpointId, lane, state);
    } finally {
      // A stopping lane's last success is stored before its lease is handed over.
      await settle(state).catch((error: Error) => this.logger.warn(error.message));
    }
  }

  private async loop(endpointId: string, lane: LaneHandle, state: LaneProgress): Promise<boolean> {
    for (let failures = 0; !this.stopping && !lane.lost;) {
      try {
        if (await this.steps.step(endpointId, lane, state)) return true;
        failures = 0;
      } catch (error) {
        // The store or Kafka is unreachable: the lane keeps its lease and its place, and tries
        // again; no attempt is used and nothing is skipped.
        failures++;
        const delay = backoffDelay(LANE_STEP_RETRY, failures);
        this.logger.error(
          `lane ${endpointId} step failed (retrying in ${delay} ms): ${(error as Error).message}`,
        );
        forget(state);
        await lane.sleepUntil(new Date(Date.now() + delay));
      }
    }
    return false;
  }

  private async renew(): Promise<void> {
    // Only lanes that held their lease when the renewal started: a lane that gives its lease up
    // and takes it again meanwhile is a new run, which the statement may not have seen.
    const held = [...this.lanes].filter(([, lane]) => lane.acquired);
    if (held.length === 0) return;
    const asked = Date.now();
    // Lanes whose renewals have failed (or hung) for most of a lease stop before it can end: once
    // it has, another worker may take the lane and send its head, and two senders would break its
    // order.
    for (const [endpointId, lane] of held) {
      if (!lane.lost && laneLeaseLapsing(lane.leaseConfirmedAt, asked, this.config.fifo.leaseMs)) {
        this.logger.warn(`lane ${endpointId} stopped: its lease could not be renewed in time`);
        lane.lost = true;
        lane.wake();
      }
    }
    try {
      const still = await this.store.renew(
        this.owner,
        held.map(([endpointId]) => endpointId),
        this.config.fifo.leaseMs,
      );
      for (const [endpointId, lane] of held) {
        // A lane still running whose lease is no longer ours (it ran out: this process was
        // stalled) stops at once; its new owner sends the head again.
        if (this.lanes.get(endpointId) === lane && !still.has(endpointId)) {
          lane.lost = true;
          lane.wake();
        } else if (still.has(endpointId)) {
          lane.leaseConfirmedAt = Math.max(lane.leaseConfirmedAt, asked);
        }
      }
    } catch (error) {
      this.logger.warn(`lease renewal failed: ${(error as Error).message}`);
    }
  }

  private async sweep(): Promise<void> {
    if (this.stopping) return;
    try {
      const unowned = await this.store.unowned(SWEEP_BATCH);
      this.wake(unowned);
    } catch (error) {
      this.logger.warn(`FIFO sweep failed: ${(error as Error).message}`);
    }
  }
}
