import { Inject, Injectable } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  Backoff,
  backoffDelay,
  DeliveryRecord,
  deliveryRecordParser,
  GroupedWork,
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
export class DispatcherConsumer extends TopicWorker<DeliveryRecord> {
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

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(TOPICS) topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly delivery: DeliveryService,
    private readonly lanes: FifoLaneRepository,
    private readonly laneRunner: FifoLaneRunner,
  ) {
    super(kafka, config, {
      role: 'dispatcher',
      topic: topics.deliveries,
      schema: deliveryRecordParser,
      partitionsConsumedConcurrently: 12,
      // Bounded memory: a partition's reading waits while this many of its messages are unfinished.
      maxUnfinishedPerPartition: config.delivery.readAheadPerPartition,
    });
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
    // whose records came without them (once per event).
    const { states, parking, endpoints, payloads } = await this.lanes.intake(
      records.map(({ record, offset }) => ({ messageId: record.messageId, seq: offset })),
      records.filter(({ record }) => record.payload === undefined).map((a) => a.record.eventId),
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
      const payload = record.payload ?? payloads.get(record.eventId);
      if (payload === undefined) {
        // Its event is no longer stored (pruned with its organization's log): nothing to send.
        this.logger.error(`message ${record.messageId}: event ${record.eventId} not found`);
        continue;
      }
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
    const sends = await this.delivery.start(
      pending,
      this.delivery.readEndpoints(
        pending.map((delivery) => delivery.endpointId),
        endpoints,
      ),
    );
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
