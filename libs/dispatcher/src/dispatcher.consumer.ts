import { Inject, Injectable, Optional } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  Backoff,
  backoffDelay,
  DeliveryRecord,
  deliveryRecordParser,
  GroupedWork,
  PayloadBudget,
} from '@hookbase/domain';
import {
  BatchContext,
  ConsumedRecord,
  InFlightRecord,
  KAFKA,
  TopicNames,
  TOPICS,
  TopicWorker,
  traceParentOfHeaders,
} from '@hookbase/kafka';
import { FifoLaneRepository } from '@hookbase/persistence';
import { HookbaseMetrics, type ScrapeSource } from '@hookbase/runtime';
import { DeliveryService, PendingDelivery } from './delivery.service';
import { FifoLaneRunner } from './fifo-lane-runner';

/** A delivery whose attempt failed to run (not the receiver's answer) is tried again after this. */
const INTAKE_RETRY: Backoff = { baseMs: 200, maxMs: 10_000, growth: 'doubling' };

/** A delivery record as read, with its offset in its partition. */
interface Arrival {
  record: DeliveryRecord;
  offset: string;
  /** The trace context the record's headers carry (the event's fan-out), or null. */
  traceParent: string | null;
  /** The record's size in bytes (what its payload counts, when it carries one). */
  bytes: number;
}

/** A record whose attempt started: the message and the send to wait for. */
interface StartedSend {
  delivery: PendingDelivery;
  done: Promise<void>;
}

/**
 * Consumes `<prefix>.deliveries`, pipelined: a partition is read on while its messages are being
 * delivered, and its committed offset is its low watermark, the lowest offset not yet finished
 * (succeeded, dead-lettered, handed to the retry schedule, or queued in its endpoint's FIFO lane,
 * which parks it in PostgreSQL at its offset). So a slow or failing endpoint never holds up the
 * others of its partition, and a crash replays exactly what was unfinished. Messages already
 * finished, queued or owned by the retry schedule (seen again after a restart) are recognised by
 * id and skipped.
 */
@Injectable()
export class DispatcherConsumer extends TopicWorker<DeliveryRecord> implements ScrapeSource {
  /** Partitions' batches that arrive while one is being taken in go together in the next intake. */
  private readonly intake = new GroupedWork<Arrival, StartedSend | null>((arrivals) =>
    this.admit(arrivals),
  );

  /**
   * Sends started by this process and not yet settled, by message id. A rebalance (another
   * dispatcher joining or leaving) makes this consumer read its partitions again from their
   * committed offsets, which lie before its sends under way: a record read again while its send
   * is still running here joins that send instead of sending the message a second time.
   */
  private readonly underWay = new Map<string, StartedSend>();

  /**
   * The payloads held for messages read and not yet sent, within
   * HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES: a message whose payload does not fit waits
   * without it and reads it when its attempt is about to start (`DeliveryService`).
   */
  private readonly payloadBudget: PayloadBudget<Record<string, unknown>>;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly delivery: DeliveryService,
    private readonly lanes: FifoLaneRepository,
    private readonly laneRunner: FifoLaneRunner,
    @Optional() catalog?: HookbaseMetrics,
  ) {
    super(kafka, config, {
      role: 'dispatcher',
      topic: topics.deliveries,
      schema: deliveryRecordParser,
      partitionsConsumedConcurrently: 12,
      // Bounded memory: a partition's reading waits while this many of its messages are unfinished.
      maxUnfinishedPerPartition: config.delivery.readAheadPerPartition,
    });
    this.payloadBudget = new PayloadBudget(config.delivery.readAheadPayloadBytes);
    catalog?.addScrapeSource(this);
  }

  /** The payload bytes held for messages read ahead, at each scrape. */
  async collect(metrics: HookbaseMetrics): Promise<void> {
    metrics.dispatchReadAheadPayloadBytes.set(this.payloadBudget.heldBytes);
  }

  protected async handle(
    records: DeliveryRecord[],
    sources: ConsumedRecord[],
    context: BatchContext,
  ): Promise<InFlightRecord[]> {
    const started = await this.intake.run(
      records.map((record, index) => ({
        record,
        offset: sources[index].offset,
        traceParent: traceParentOfHeaders(sources[index].headers),
        bytes: sources[index].value?.length ?? 0,
      })),
    );
    return started.flatMap((send, index) =>
      send
        ? [
            {
              offset: sources[index].offset,
              done: this.untilDone(send.delivery, send.done, context),
            },
          ]
        : [],
    );
  }

  /**
   * Takes the records of every partition whose batch arrived while the last intake was under
   * way, in one set of reads and writes: which are still on this path, which join a FIFO lane,
   * and the sends of the rest (null for a record that starts nothing here).
   */
  private async admit(records: readonly Arrival[]): Promise<(StartedSend | null)[]> {
    // In one statement: every record's state, new messages of FIFO endpoints parked in their
    // lanes, in offset order, before anything else, their endpoints' configuration versions and
    // health, so that only endpoints that changed are read after it, and the payloads of events
    // whose records came without them (once per event, unless already held, and only as many as
    // the payload budget has room for).
    const intakeAt = new Date();
    const { states, parking, endpoints, payloads } = await this.lanes.intake(
      records.map(({ record, offset }) => ({ messageId: record.messageId, seq: offset })),
      records
        .filter(
          ({ record }) => record.payload === undefined && !this.payloadBudget.holds(record.eventId),
        )
        .map((a) => a.record.eventId),
      this.payloadBudget.room(),
    );
    const { queued } = parking;
    const seen = new Set<string>();
    const candidates: { arrival: Arrival; attemptsMade: number }[] = [];
    for (const arrival of records) {
      const { messageId } = arrival.record;
      const state = states.get(messageId);
      // Only messages still on the deliveries path: new ones, or ones interrupted mid-attempt.
      const onThisPath = state !== undefined && state.route === 'stream';
      if (!onThisPath || seen.has(messageId)) continue;
      seen.add(messageId);
      candidates.push({ arrival, attemptsMade: state.attempts });
    }
    const inLanes = new Set(queued.map((q) => q.messageId));
    this.laneRunner.wake(new Set(queued.map((q) => q.endpointId)));
    const pending: PendingDelivery[] = [];
    /** Events whose payloads messages of this intake took from the budget, one entry each. */
    const holding: string[] = [];
    const bySource = new Map<Arrival, PendingDelivery>();
    const joined = new Map<Arrival, StartedSend>();
    for (const { arrival, attemptsMade } of candidates) {
      const { record } = arrival;
      if (inLanes.has(record.messageId)) continue;
      const running = this.underWay.get(record.messageId);
      if (running) {
        joined.set(arrival, running);
        continue;
      }
      const read =
        record.payload === undefined
          ? payloads.get(record.eventId)
          : { payload: record.payload, bytes: arrival.bytes };
      // Held within the budget (or shared with the event's other messages held), or left to read
      // when the attempt is about to start.
      const payload = this.payloadBudget.hold(record.eventId, read);
      if (payload !== undefined) holding.push(record.eventId);
      const delivery: PendingDelivery = {
        messageId: record.messageId,
        webhookId: record.messageId,
        source: 'new',
        eventId: record.eventId,
        organizationId: record.organizationId,
        endpointId: record.endpointId,
        eventType: record.eventType,
        payload,
        acceptedAt: new Date(record.acceptedAt),
        attemptsMade,
        traceParent: arrival.traceParent,
      };
      pending.push(delivery);
      bySource.set(arrival, delivery);
    }
    let sends: Map<string, Promise<void>>;
    try {
      sends = await this.delivery.start(
        pending,
        this.delivery.readEndpoints(
          pending.map((delivery) => delivery.endpointId),
          endpoints,
          intakeAt,
        ),
      );
    } catch (error) {
      for (const eventId of holding) this.payloadBudget.release(eventId);
      throw error;
    }
    // A payload held goes back to the budget once its message's send is settled, or at once
    // when the message started nothing here.
    for (const delivery of pending) {
      if (delivery.payload === undefined) continue;
      const done = sends.get(delivery.messageId);
      const release = () => this.payloadBudget.release(delivery.eventId);
      if (done) done.then(release, release);
      else release();
    }
    return records.map((arrival) => {
      const running = joined.get(arrival);
      if (running) return running;
      const delivery = bySource.get(arrival);
      const done = delivery && sends.get(delivery.messageId);
      if (!delivery || !done) return null;
      const started = { delivery, done };
      this.underWay.set(delivery.messageId, started);
      const forget = () => {
        if (this.underWay.get(delivery.messageId) === started)
          this.underWay.delete(delivery.messageId);
      };
      done.then(forget, forget);
      return started;
    });
  }

  /**
   * A send that failed (the store or Kafka went away mid-way) is delivered again, alone, while
   * this process owns the partition; otherwise it stays unfinished and is read again later.
   */
  private async untilDone(
    delivery: PendingDelivery,
    send: Promise<void>,
    context: BatchContext,
  ): Promise<void> {
    let failure: unknown;
    try {
      return await send;
    } catch (error) {
      failure = error;
    }
    for (let attempt = 1; context.isActive(); attempt++) {
      this.logger.warn(
        `message ${delivery.messageId} will be delivered again: ${(failure as Error).message}`,
      );
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(INTAKE_RETRY, attempt)));
      try {
        return await this.delivery.deliver([delivery]);
      } catch (error) {
        failure = error;
      }
    }
    throw failure;
  }
}
