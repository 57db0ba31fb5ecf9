import { Logger } from '@nestjs/common';
import { HookbaseConfig } from '@hookbase/config';
import {
  DEFAULT_RETRY_POLICY,
  emptyWindowStep,
  LANE_LINGER_MS,
  LaneEndpoint,
  nextLaneStep,
} from '@hookbase/domain';
import { EndpointEntity, FifoLaneRepository, QueuedMessage } from '@hookbase/persistence';
import { Attempts } from './attempt.service';
import { DeadLetters } from './dead-letter.service';
import { LaneGuards, type Refusal } from './endpoint-guards';
import { PayloadReads } from './event-payloads';
import { EndpointRead, LaneStore } from './grouped-lane-store';
import { forget, LaneHandle, LaneProgress, settle } from './lane-handle';
import { PendingDelivery } from './pending-delivery';

/**
 * A lane's window: its head and at most READ_AHEAD messages behind it, while their payloads come to
 * at most READ_AHEAD_BYTES, or to the lane's even part of LANES_READ_AHEAD_BYTES when many lanes
 * run (`laneWindowBytes`). A head whose payload alone is larger comes without it and reads it in
 * its dispatch slot, so that however many lanes have backlogs of large payloads, what their
 * windows hold comes to at most LANES_READ_AHEAD_BYTES, and beyond that one payload for each
 * attempt under way. A blocked lane keeps only its head.
 */
export const READ_AHEAD = 50;
export const READ_AHEAD_BYTES = 256 * 1024;
export const LANES_READ_AHEAD_BYTES = 32 * 1024 * 1024;
const DEAD_LETTER_CHUNK = 500;
/** How long a lane delivering back to back reuses its read of the endpoint. */
const ENDPOINT_READ_REUSE_MS = 250;
/** An attempt under way this long is shown as in flight (status `in_flight`). */
const IN_FLIGHT_SHOWN_AFTER_MS = 50;
/** A read this old is renewed beside the next send. */
const ENDPOINT_READ_RENEW_MS = 150;

/** What a lane's steps work with; the runner that holds the lanes' leases gives them. */
export interface LaneStepsDeps {
  config: HookbaseConfig;
  store: FifoLaneRepository;
  /** The lanes' store calls, grouped across this process's lanes. */
  laneStore: LaneStore;
  /** The process's owner name in the lanes' leases. */
  owner: string;
  /** Payloads of heads that came without theirs (larger than their window's bound). */
  payloads: PayloadReads;
  guards: LaneGuards;
  attempts: Attempts;
  deadLetters: DeadLetters;
}

/**
 * One lane's work, a step at a time, while its runner holds the lane's lease: reads its queue and
 * its endpoint, decides what to do with the head (`nextLaneStep`) and does it: deliver it through
 * the endpoint's guards and one attempt, wait (retry time, circuit, rate limit), expire it, hand
 * the queue back (FIFO turned off) or dead-letter it (endpoint deleted).
 */
export class LaneSteps {
  private readonly logger = new Logger(LaneSteps.name);
  private readonly config: HookbaseConfig;
  private readonly store: FifoLaneRepository;
  private readonly laneStore: LaneStore;
  private readonly owner: string;
  private readonly payloads: PayloadReads;
  private readonly guards: LaneGuards;
  private readonly attempts: Attempts;
  private readonly deadLetters: DeadLetters;

  constructor(deps: LaneStepsDeps) {
    ({
      config: this.config,
      store: this.store,
      laneStore: this.laneStore,
      owner: this.owner,
      payloads: this.payloads,
      guards: this.guards,
      attempts: this.attempts,
      deadLetters: this.deadLetters,
    } = deps);
  }

  /** One step of a lane; true when the lane is done (its queue is empty and released). */
  async step(endpointId: string, lane: LaneHandle, state: LaneProgress): Promise<boolean> {
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
      const read = await this.laneStore.queue(endpointId);
      state.window = read.messages;
      state.readWholeQueue = read.whole;
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
        // Its payload was purged (which ended it) or pruned: the queue as it is now goes on.
        if (sent === 'gone') forget(state);
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
   * is to be retried or was not sent, `refused` when the endpoint's guards did not admit it now,
   * `gone` when its payload, read in the slot (the head came without it), is no longer stored. A
   * success is stored while the next head is sent (ADR 9): the lane waits a round trip to the
   * receiver per message, not that plus a write. A crash before the write lands sends that head
   * again before the next, so first deliveries stay in order.
   *
   * The dispatch slot comes first and the guards' admission inside it, as on the unordered path:
   * a lane waiting for a slot holds no rate-limit token and no circuit probe, which the endpoint's
   * other messages could use meanwhile. When the endpoint's read has aged past
   * ENDPOINT_READ_REUSE_MS by the time the slot comes, it is read again in the slot; if the
   * endpoint may no longer be delivered to (paused, deleted, changed so), nothing is sent or
   * admitted and the lane's next step goes by the new read. A head that came without its payload
   * reads it in the slot too, before admission, and holds it only while its attempt is under way.
   */
  private async deliverHead(
    read: EndpointRead,
    head: QueuedMessage,
    state: LaneProgress,
  ): Promise<'finished' | 'again' | 'gone' | { refused: Refusal }> {
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
        const payload = head.payload ?? (await this.payloads.read(head.eventId));
        if (payload === undefined) {
          this.logger.warn(
            `lane ${endpointId}: the payload of event ${head.eventId} is no longer stored`,
          );
          return 'gone' as const;
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
        return this.attempts.attempt({ ...pending(head), payload }, endpoint!, secrets, {
          deferSuccessRecord: true,
          recordSoon: true,
        });
      })
      .finally(() => clearTimeout(mark));
    if (!sent) return 'again';
    if (sent === 'gone' || 'refused' in sent) return sent;
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
