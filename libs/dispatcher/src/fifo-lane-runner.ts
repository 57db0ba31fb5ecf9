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
  DEFAULT_RETRY_POLICY,
  emptyWindowStep,
  LANE_LINGER_MS,
  LaneEndpoint,
  laneLeaseLapsing,
  laneRenewEveryMs,
  nextLaneStep,
} from '@hookbase/domain';
import {
  EndpointEntity,
  EndpointRepository,
  FifoLaneRepository,
  QueuedMessage,
} from '@hookbase/persistence';
import { Drainable, DrainsOnShutdown, settledBy } from '@hookbase/runtime';
import { Attempts, AttemptService } from './attempt.service';
import { DeadLetters, DeadLetterService } from './dead-letter.service';
import { EndpointGuards, LaneGuards, type Refusal } from './endpoint-guards';
import { EndpointRead, GroupedLaneStore, LaneStore } from './grouped-lane-store';
import { PendingDelivery } from './pending-delivery';

/** A lane whose step failed (the store, a lost read) tries again after this. */
const LANE_STEP_RETRY: Backoff = { baseMs: 100, maxMs: 5_000, growth: 'doubling' };
/** Messages of a lane read ahead of its head; a blocked lane keeps only its head. */
const READ_AHEAD = 50;
/** Lanes taken per sweep. */
const SWEEP_BATCH = 200;
const DEAD_LETTER_CHUNK = 500;
/** How long a lane delivering back to back reuses its read of the endpoint. */
const ENDPOINT_READ_REUSE_MS = 250;
/** An attempt under way this long is shown as in flight (status `in_flight`). */
const IN_FLIGHT_SHOWN_AFTER_MS = 50;
/** A read this old is renewed beside the next send. */
const ENDPOINT_READ_RENEW_MS = 150;

interface LaneProgress {
  /** The head and the messages read after it. */
  window: QueuedMessage[];
  /** The window came from a read that held the whole queue, and nothing has been forgotten since. */
  readWholeQueue: boolean;
  /** The lane lingered (waited for a wake with an empty window) since its last read. */
  lingered: boolean;
  /** Whether the lane last told the store it waits for the circuit breaker. */
  saidBlocked: boolean;
  /** The last read of the endpoint, reused while the lane runs back to back. */
  endpointRead?: EndpointRead;
  /** A read of the endpoint under way beside a send, to replace `endpointRead` before it ages. */
  refreshing?: Promise<EndpointRead | undefined>;
  /**
   * The store write of the last head's success, still under way while the next head is sent (at
   * most one). The lane waits for it before it reads its queue again or does anything else.
   */
  recording?: Promise<void>;
}

/** One running lane in this process. */
class LaneHandle {
  /** Set once this process holds the lane's lease. */
  acquired = false;
  /** When the statement that last gave or renewed the lease was sent (this process's clock). */
  leaseConfirmedAt = 0;
  lost = false;
  /** Messages were queued for the lane since it last read its queue. */
  woken = false;
  /** The lane waits, with an empty window, to be woken (see `emptyWindowStep`). */
  lingering = false;
  private interrupt: (() => void) | undefined;
  done: Promise<void> = Promise.resolve();

  /** Sleeps until `until`, or until interrupted (stop, lost lease). */
  sleepUntil(until: Date): Promise<void> {
    const ms = Math.max(0, until.getTime() - Date.now());
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.interrupt = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Waits up to `ms` for a wake (messages queued, a stop, a lost lease). */
  async linger(ms: number): Promise<void> {
    this.lingering = true;
    try {
      await this.sleepUntil(new Date(Date.now() + ms));
    } finally {
      this.lingering = false;
    }
  }

  wake(): void {
    this.interrupt?.();
  }
}

/**
 * Runs FIFO lanes (ADR 0009). A lane is an endpoint's ordered queue, parked in PostgreSQL by the
 * dispatcher consumer; the worker holding the lane's lease delivers its head, one message at a
 * time, through the same guards (`admit`: circuit breaker, then rate limit) and the same attempt
 * as any delivery, and moves on only once the head has finished (succeeded or dead-lettered).
 * What the lane does next is the rule `nextLaneStep`; its collaborators are narrow interfaces. A lane whose queue empties gives
 * its lease up; lanes that no worker holds (after a stop, or a lease that ran out because its
 * worker died) are found by a periodic sweep and taken over.
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
  private readonly laneStore: LaneStore;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly store: FifoLaneRepository,
    endpoints: EndpointRepository,
    @Inject(EndpointGuards) private readonly guards: LaneGuards,
    @Inject(AttemptService) private readonly attempts: Attempts,
    @Inject(DeadLetterService) private readonly deadLetters: DeadLetters,
  ) {
    this.laneStore = new GroupedLaneStore(
      store,
      endpoints,
      this.owner,
      config.fifo.leaseMs,
      READ_AHEAD,
    );
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
        if (await this.step(endpointId, lane, state)) return true;
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

  /** One step of a lane; true when the lane is done (its queue is empty and released). */
  private async step(endpointId: string, lane: LaneHandle, state: LaneProgress): Promise<boolean> {
    if (state.window.length === 0) {
      // The queue read must not see the last head as still queued: its success is stored first.
      await settle(state);
      const next = emptyWindowStep({
        readWholeQueue: state.readWholeQueue,
        woken: lane.woken,
        lingered: state.lingered,
      });
      if (next === 'linger') {
        state.lingered = true;
        await lane.linger(LANE_LINGER_MS);
        return false;
      }
      if (next === 'release-if-empty' && (await this.laneStore.releaseIfEmpty(endpointId))) {
        return true;
      }
      lane.woken = false;
      state.lingered = false;
      state.window = await this.laneStore.queue(endpointId);
      state.readWholeQueue = state.window.length < READ_AHEAD;
      if (state.window.length === 0) return false;
    }
    const head = state.window[0];
    const now = new Date();
    const read = await this.readEndpoint(endpointId, state, now);
    const { endpoint } = read;
    const step = this.laneStep(endpointId, endpoint, head, now);
    // Only a delivery goes on beside the last success's write; every other step changes the queue.
    if (step.action !== 'deliver') await settle(state);
    switch (step.action) {
      case 'dead-letter-all':
        await this.deadLetterQueue(endpointId);
        forget(state);
        break;
      case 'hand-back': {
        const { transitioned } = await this.store.handBack(endpointId);
        this.logger.log(
          `FIFO off for ${endpointId}: ${transitioned.length} queued messages handed back`,
        );
        forget(state);
        break;
      }
      case 'expire-head':
        await this.deadLetters.deadLetter([pending(head)], step.reason, 'expired');
        state.window.shift();
        break;
      case 'wait':
        if (step.reason === 'circuit_open') await this.sayBlocked(endpointId, state, step.until);
        // A waiting lane keeps nothing in memory; it reads its head and endpoint afresh on waking.
        forget(state);
        state.endpointRead = undefined;
        await lane.sleepUntil(step.until);
        break;
      case 'deliver': {
        // 'deliver' is only ever decided for an endpoint that exists.
        if (!endpoint) throw new Error(`endpoint ${endpointId} vanished`);
        const sent = await this.deliverHead(read, head, state);
        if (sent === 'finished') state.window.shift();
        if (typeof sent === 'string') break;
        const admission = sent.refused;
        if (admission.reason === 'circuit_open') {
          // The circuit opened (or its probe went out) since the rule looked: wait as for it.
          await settle(state);
          const until = new Date(
            Math.min(admission.until.getTime(), now.getTime() + this.config.delivery.holdRecheckMs),
          );
          await this.sayBlocked(endpointId, state, until);
          forget(state);
          state.endpointRead = undefined;
          await lane.sleepUntil(until);
          break;
        }
        // The messages behind the head are read again once it has gone.
        state.window = [head];
        state.readWholeQueue = false;
        state.endpointRead = undefined;
        await lane.sleepUntil(admission.until);
        break;
      }
      default: {
        const unreachable: never = step;
        throw new Error(`unknown lane step ${JSON.stringify(unreachable)}`);
      }
    }
    return false;
  }

  /** The lane's next step for its head, by the endpoint as read (`nextLaneStep`). */
  private laneStep(
    endpointId: string,
    endpoint: EndpointEntity | undefined,
    head: QueuedMessage,
    now: Date,
  ) {
    return nextLaneStep({
      endpoint: endpoint ? laneEndpoint(endpoint) : null,
      head,
      now,
      retentionCutoff: new Date(now.getTime() - this.config.retention.days[head.plan] * 86_400_000),
      recheckMs: this.config.delivery.holdRecheckMs,
      circuit: this.guards.circuitOf(endpointId),
      circuitPolicy: this.guards.circuitPolicy,
    });
  }

  /** Tells the store the lane waits for the endpoint's circuit breaker until `until`. */
  private async sayBlocked(endpointId: string, state: LaneProgress, until: Date): Promise<void> {
    await this.store.setBlocked(endpointId, this.owner, 'circuit_open', until);
    state.saidBlocked = true;
  }

  /**
   * The endpoint and its signing secrets, read fresh, or reused from a read started within the
   * last ENDPOINT_READ_REUSE_MS while the lane runs back to back (a change to the endpoint still
   * applies to the messages that follow within that time, as it does to a batch in flight). A
   * read past most of that age is renewed beside the next send, so a busy lane does not stop to
   * read.
   */
  private async readEndpoint(
    endpointId: string,
    state: LaneProgress,
    now: Date,
  ): Promise<EndpointRead> {
    const cached = state.endpointRead;
    const age = cached ? now.getTime() - cached.at : Infinity;
    if (cached && age < ENDPOINT_READ_REUSE_MS) {
      if (age >= ENDPOINT_READ_RENEW_MS && !state.refreshing) {
        const refreshing = this.fetchEndpoint(endpointId)
          .then((read) => {
            // Its age counts from when it started: it is used only while that is recent enough.
            state.endpointRead = read;
            return read;
          })
          .catch((error: Error) => {
            this.logger.warn(`lane ${endpointId}: endpoint read failed: ${error.message}`);
            return undefined;
          })
          .finally(() => {
            if (state.refreshing === refreshing) state.refreshing = undefined;
          });
        state.refreshing = refreshing;
      }
      return cached;
    }
    const renewed = state.refreshing ? await state.refreshing : undefined;
    if (renewed && now.getTime() - renewed.at < ENDPOINT_READ_REUSE_MS) return renewed;
    const read = await this.fetchEndpoint(endpointId);
    state.endpointRead = read;
    return read;
  }

  private fetchEndpoint(endpointId: string): Promise<EndpointRead> {
    return this.laneStore.endpoint(endpointId);
  }

  /**
   * One attempt of the head: `finished` once it has (succeeded or dead-lettered), `again` when it
   * is to be retried or was not sent, `refused` when the endpoint's guards did not admit it now. A
   * success is stored while the next head is sent (ADR 9): the lane waits a round trip to the
   * receiver per message, not that plus a write. A crash before the write lands sends that head
   * again before the next, so first deliveries stay in order.
   *
   * The dispatch slot comes first and the guards' admission inside it, as on the unordered path:
   * a lane waiting for a slot holds no rate-limit token and no circuit probe, which the endpoint's
   * other messages could use meanwhile. When the endpoint's read has aged past
   * ENDPOINT_READ_REUSE_MS by the time the slot comes, it is read again in the slot; if the
   * endpoint may no longer be delivered to (paused, deleted, changed so), nothing is sent or
   * admitted and the lane's next step goes by the new read.
   */
  private async deliverHead(
    read: EndpointRead,
    head: QueuedMessage,
    state: LaneProgress,
  ): Promise<'finished' | 'again' | { refused: Refusal }> {
    const endpointId = read.endpoint!.id;
    // Shown in the log as being delivered once the attempt has taken IN_FLIGHT_SHOWN_AFTER_MS
    // (counted from when it holds its dispatch slot: a wait for one is not an attempt under way):
    // one that ends sooner is recorded straight away, and a lane running back to back saves a
    // write per message. Not waited for (the lease, not this, guards the head); the marks of many
    // lanes go together, and a mark that lands after the attempt's record changes nothing (it
    // matches the attempts made before).
    let mark: NodeJS.Timeout | undefined;
    const sent = await this.guards
      .withDispatchSlot(read.endpoint!.organizationId, async () => {
        let { endpoint, secrets } = read;
        if (Date.now() - read.at >= ENDPOINT_READ_REUSE_MS) {
          const fresh = await this.fetchEndpoint(endpointId);
          state.endpointRead = fresh;
          if (this.laneStep(endpointId, fresh.endpoint, head, new Date()).action !== 'deliver') {
            return undefined;
          }
          ({ endpoint, secrets } = fresh);
        }
        // The lane rule's circuit check only chose not to wait: the probe or token is taken by
        // admission alone, and only for an attempt that goes now.
        const admission = await this.guards.admit(endpoint!);
        if (admission !== true) return { refused: admission };
        if (state.saidBlocked) {
          await this.store.setBlocked(endpointId, this.owner, null, null);
          state.saidBlocked = false;
        }
        if (head.status !== 'in_flight') {
          mark = setTimeout(() => {
            void this.laneStore
              .startHeadAttempt(head.messageId, head.attempts)
              .catch((error: Error) => this.logger.warn(error.message));
          }, IN_FLIGHT_SHOWN_AFTER_MS);
        }
        return this.attempts.attempt(pending(head), endpoint!, secrets, {
          deferSuccessRecord: true,
          recordSoon: true,
        });
      })
      .finally(() => clearTimeout(mark));
    if (!sent) return 'again';
    if ('refused' in sent) return sent;
    const { outcome, decision, recorded } = sent;
    // The previous head's write (long done: it had a whole round trip) before this one's starts.
    await settle(state);
    state.recording = recorded;
    this.guards.afterAttempt(endpointId, outcome);
    head.attempts++;
    if (decision.status === 'awaiting_retry') {
      head.status = 'awaiting_retry';
      head.nextAttemptAt = decision.nextAttemptAt;
      return 'again';
    }
    return 'finished';
  }

  /** The endpoint was deleted: its queued messages go to the DLQ, oldest first. */
  private async deadLetterQueue(endpointId: string): Promise<void> {
    for (;;) {
      const chunk = await this.store.queue(endpointId, DEAD_LETTER_CHUNK);
      if (chunk.length === 0) return;
      await this.deadLetters.deadLetter(chunk.map(pending), 'endpoint_deleted', 'cancelled');
    }
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

/** The lane drops its window: its next step reads the queue again. */
function forget(state: LaneProgress): void {
  state.window = [];
  state.readWholeQueue = false;
}

/** Waits for the lane's outstanding success write; a failed write throws (the lane re-reads). */
async function settle(state: LaneProgress): Promise<void> {
  const recording = state.recording;
  if (!recording) return;
  state.recording = undefined;
  await recording;
}

function laneEndpoint(endpoint: EndpointEntity): LaneEndpoint {
  return {
    status: endpoint.status,
    fifoEnabled: endpoint.fifoEnabled,
    deleted: endpoint.deletedAt !== null,
    maxAgeMs: (endpoint.retry ?? DEFAULT_RETRY_POLICY).maxAgeMs,
  };
}

function pending(message: QueuedMessage): PendingDelivery {
  return {
    messageId: message.messageId,
    webhookId: message.messageId,
    source: 'new',
    eventId: message.eventId,
    organizationId: message.organizationId,
    endpointId: message.endpointId,
    eventType: message.eventType,
    payload: message.payload,
    acceptedAt: message.acceptedAt,
    attemptsMade: message.attempts,
    traceParent: message.traceParent,
  };
}
