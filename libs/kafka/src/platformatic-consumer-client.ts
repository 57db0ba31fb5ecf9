import type * as Platformatic from '@platformatic/kafka';
import type { IHeaders } from 'kafkajs';
import {
  ConsumedRecord,
  ConsumerClient,
  ConsumerClientEvents,
  ConsumerSettings,
} from './consumer-client';
import { loadPlatformaticKafka } from './platformatic-producer-client';

type Consumer = Platformatic.Consumer<Buffer, Buffer, Buffer, Buffer>;
type FetchResponse = Awaited<ReturnType<Consumer['fetch']>>;
type RecordsBatch = NonNullable<
  FetchResponse['responses'][number]['partitions'][number]['records']
>[number];

/** What the adapter needs of `@platformatic/kafka`'s consumer; unit tests hand it a stand-in. */
export type PlatformaticConsumer = Pick<
  Consumer,
  | 'joinGroup'
  | 'close'
  | 'metadata'
  | 'fetch'
  | 'commit'
  | 'listCommittedOffsets'
  | 'listOffsets'
  | 'on'
  | 'topics'
>;

/** How long a fetch waits on the broker for a record, as with kafkajs. */
export const FETCH_WAIT_MS = 100;
/** How often a member whose partitions are all full looks again for room. */
const ROOM_POLL_MS = 20;
/** After a failed fetch the next waits this long, doubling up to 5 s. */
const FETCH_RETRY_MS = { first: 200, max: 5_000 };
/** A record batch of control records (transaction markers), never handed over. */
const CONTROL_BATCH = 0b10_0000;
/** Kafka's code for a fetch offset outside the partition's log. */
const OFFSET_OUT_OF_RANGE = 1;
/** kafkajs's assignor's name: a group may hold members of either client during a rolling change. */
export const ROUND_ROBIN_PROTOCOL = { name: 'RoundRobinAssigner', version: 0 } as const;

export interface PlatformaticConsumerConnection {
  clientId: string;
  brokers: string[];
}

/** A consumer of `@platformatic/kafka` for one group: no stream, since Hookbase fetches itself. */
export function createPlatformaticConsumer(
  connection: PlatformaticConsumerConnection,
  settings: ConsumerSettings,
): PlatformaticConsumer {
  const client = loadPlatformaticKafka();
  return new client.Consumer<Buffer, Buffer, Buffer, Buffer>({
    clientId: connection.clientId,
    bootstrapBrokers: connection.brokers,
    groupId: settings.groupId,
    autocreateTopics: false,
    autocommit: false,
    sessionTimeout: settings.sessionTimeoutMs,
    heartbeatInterval: heartbeatIntervalMs(settings.sessionTimeoutMs),
    rebalanceTimeout: 60_000,
    protocols: [ROUND_ROBIN_PROTOCOL],
    minBytes: 1,
    maxWaitTime: FETCH_WAIT_MS,
    maxBytesPerPartition: settings.maxBytesPerPartition,
    timeout: 30_000,
    retries: 3,
  });
}

/** A tenth of the session, at least 500 ms: as the kafkajs client beats. */
export function heartbeatIntervalMs(sessionTimeoutMs: number): number {
  return Math.max(500, Math.floor(sessionTimeoutMs / 10));
}

/** The records of one partition's fetched batches, from `from` on, control batches left out. */
export function recordsOf(
  partition: number,
  batches: readonly RecordsBatch[],
  from: bigint,
): { records: ConsumedRecord[]; next: bigint | null } {
  const records: ConsumedRecord[] = [];
  let next: bigint | null = null;
  for (const batch of batches) {
    next = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n;
    if ((batch.attributes & CONTROL_BATCH) !== 0) continue;
    for (const record of batch.records) {
      const offset = batch.firstOffset + BigInt(record.offsetDelta);
      // A fetch answers whole batches: records before the one asked for were handed over before.
      if (offset < from) continue;
      const headers: IHeaders = {};
      for (const [name, value] of record.headers) {
        if (name) headers[name.toString()] = value ?? undefined;
      }
      records.push({
        partition,
        offset: offset.toString(),
        key: record.key ? record.key.toString() : null,
        value: record.value,
        timestamp: (batch.firstTimestamp + record.timestampDelta).toString(),
        headers,
      });
    }
  }
  return { records, next };
}

/** The bytes a fetch asks of a partition never go below this, whatever its room. */
export const MIN_FETCH_BYTES = 16 * 1024;

/**
 * The size of the topic's records as fetched (a running mean over record batches), so that a
 * fetch asks a partition for about as many records' bytes as its window has room for.
 */
export class RecordSizes {
  private mean: number | undefined;

  observe(batches: readonly RecordsBatch[]): void {
    for (const batch of batches) {
      const count = batch.records.length;
      if (count === 0 || !(batch.length > 0)) continue;
      const size = batch.length / count;
      this.mean = this.mean === undefined ? size : this.mean + (size - this.mean) / 8;
    }
  }

  /** The bytes to ask for `room` records: at most `max`, at least MIN_FETCH_BYTES. */
  bytesFor(room: number, max: number): number {
    if (this.mean === undefined || !Number.isFinite(room)) return max;
    return Math.min(max, Math.max(MIN_FETCH_BYTES, Math.ceil(room * this.mean)));
  }
}

/**
 * A consumer group member through `@platformatic/kafka`, with Hookbase's own fetch loop over the
 * library's group membership (join, heartbeats, rejoin on a rebalance) and its `fetch`.
 *
 * The loop asks for every assigned partition whose window has room (`room`) and whose last
 * batch was handled, for about as many records' bytes as that room, hands the batches of a fetch
 * over (at most `partitionsConsumedConcurrently` at once), waits for them, and fetches again. A
 * full partition is left out of the fetches while the others are read: the library's stream
 * pauses only as a whole. Records beyond what a batch's handler took are fetched again.
 */
export class PlatformaticConsumerClient implements ConsumerClient {
  private consumer: PlatformaticConsumer | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  /** Counts the member's joins: a batch read before the last one is no longer its own. */
  private generation = 0;
  private assigned: number[] = [];
  /** The next offset to read of each assigned partition, once known after a join. */
  private positions = new Map<number, bigint>();
  private positionsOf = -1;
  private failures = 0;
  /** Between a rebalance's start and the member's join. */
  private rebalancing = false;
  private events: ConsumerClientEvents | undefined;
  private readonly recordSizes = new RecordSizes();

  constructor(
    private readonly create: () => PlatformaticConsumer,
    private readonly settings: ConsumerSettings,
    private readonly warn: (line: string) => void = () => undefined,
  ) {}

  async start(events: ConsumerClientEvents): Promise<void> {
    const consumer = this.create();
    this.consumer = consumer;
    this.events = events;
    consumer.on('consumer:group:join', (payload) => {
      this.rebalancing = false;
      this.generation++;
      this.positions = new Map();
      const own = payload.assignments?.find((a) => a.topic === this.settings.topic);
      this.assigned = own ? [...own.partitions] : [];
      events.joined(this.assigned.length);
    });
    // The group rebalances: what finished is committed now, while this member's generation still
    // counts, and nothing more is handed over or committed until the join. A batch handed over
    // meanwhile would start work on a partition that may be another member's after the join.
    consumer.on('consumer:group:rebalance', () => {
      events.unassigned();
      this.rebalancing = true;
      this.generation++;
      this.assigned = [];
      this.positions = new Map();
    });
    consumer.on('consumer:group:leave', () => events.unassigned());
    consumer.on('consumer:heartbeat:error', ({ error }) =>
      events.problem(`heartbeat failed: ${(error as Error).message}`),
    );
    consumer.on('consumer:heartbeat:end', () => events.problem(undefined));
    // The membership is lost for good (no heartbeat answered within the stall window, or a rejoin
    // failed): the BatchConsumer replaces this client.
    consumer.on('consumer:heartbeat:stalled', ({ lastError }) =>
      this.fail(lastError ?? new Error('no heartbeat answered')),
    );
    consumer.on('error', (error: Error) => this.fail(error));
    consumer.topics.track(this.settings.topic);
    await consumer.joinGroup({
      sessionTimeout: this.settings.sessionTimeoutMs,
      heartbeatInterval: heartbeatIntervalMs(this.settings.sessionTimeoutMs),
      rebalanceTimeout: 60_000,
      protocols: [ROUND_ROBIN_PROTOCOL],
    });
    this.running = true;
    this.loop = this.read(consumer, events);
  }

  private fail(error: Error): void {
    if (!this.running) return;
    this.running = false;
    this.events?.failed(error, false);
  }

  /** Fetch, hand over, wait, again, until closed. */
  private async read(consumer: PlatformaticConsumer, events: ConsumerClientEvents): Promise<void> {
    while (this.running) {
      try {
        const generation = this.generation;
        if (this.positionsOf !== generation) {
          await this.loadPositions(consumer, generation);
          continue;
        }
        const wanted = new Map<number, number>();
        for (const partition of this.assigned) {
          if (!this.positions.has(partition)) continue;
          const room = events.room(this.settings.topic, partition);
          if (room > 0) wanted.set(partition, room);
        }
        if (wanted.size === 0) {
          await delay(this.assigned.length === 0 ? FETCH_WAIT_MS : ROOM_POLL_MS);
          continue;
        }
        const batches = await this.fetch(consumer, wanted, generation);
        if (batches.length > 0) await this.handOver(batches, generation, events);
        this.failures = 0;
      } catch (error) {
        if (!this.running) return;
        const wait = Math.min(FETCH_RETRY_MS.max, FETCH_RETRY_MS.first * 2 ** this.failures);
        this.failures++;
        this.warn(
          `reading ${this.settings.topic} failed (${(error as Error).message}); again in ${wait} ms`,
        );
        events.problem(`reading failed: ${(error as Error).message}`);
        await delay(wait);
      }
    }
  }

  /** After a join: each partition from its committed offset, or from its first if none. */
  private async loadPositions(consumer: PlatformaticConsumer, generation: number): Promise<void> {
    const topic = this.settings.topic;
    const partitions = [...this.assigned];
    const positions = new Map<number, bigint>();
    if (partitions.length > 0) {
      const committed = await consumer.listCommittedOffsets({ topics: [{ topic, partitions }] });
      const offsets = committed.get(topic) ?? [];
      const unknown = partitions.filter((p) => (offsets[p] ?? -1n) < 0n);
      for (const p of partitions) if (!unknown.includes(p)) positions.set(p, offsets[p]);
      if (unknown.length > 0) {
        const first = await consumer.listOffsets({
          topics: [topic],
          partitions: { [topic]: unknown },
          timestamp: -2n, // EARLIEST
        });
        const earliest = first.get(topic) ?? [];
        for (const p of unknown) positions.set(p, earliest[p] ?? 0n);
      }
    }
    if (generation !== this.generation) return; // joined again meanwhile: load for that one
    this.positions = positions;
    this.positionsOf = generation;
  }

  /**
   * One fetch per leader of the partitions wanted (each with its room, in records); the batches
   * that came back with records.
   */
  private async fetch(
    consumer: PlatformaticConsumer,
    wanted: ReadonlyMap<number, number>,
    generation: number,
  ): Promise<{ partition: number; from: bigint; records: ConsumedRecord[]; next: bigint }[]> {
    const topic = this.settings.topic;
    const partitions = [...wanted.keys()];
    const metadata = await consumer.metadata({ topics: [topic] });
    const described = metadata.topics.get(topic);
    if (!described) throw new Error(`topic ${topic} not found`);
    const byLeader = new Map<number, number[]>();
    for (const partition of partitions) {
      const leader = described.partitions[partition]?.leader ?? -1;
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), partition]);
    }
    const asked = new Map(partitions.map((p) => [p, this.positions.get(p)!]));
    const responses = await Promise.all(
      [...byLeader].map(([node, own]) =>
        consumer
          .fetch({
            node,
            maxWaitTime: FETCH_WAIT_MS,
            minBytes: 1,
            maxBytes: this.settings.maxBytesPerPartition * own.length,
            topics: [
              {
                topicId: described.id,
                partitions: own.map((partition) => ({
                  partition,
                  fetchOffset: asked.get(partition)!,
                  partitionMaxBytes: this.recordSizes.bytesFor(
                    wanted.get(partition)!,
                    this.settings.maxBytesPerPartition,
                  ),
                  currentLeaderEpoch: -1,
                  lastFetchedEpoch: -1,
                })),
              },
            ],
          })
          .catch((error: unknown) => this.outOfRange(error, generation)),
      ),
    );
    const batches: { partition: number; from: bigint; records: ConsumedRecord[]; next: bigint }[] =
      [];
    if (generation !== this.generation) return batches;
    for (const response of responses) {
      for (const answer of response?.responses ?? []) {
        for (const { partitionIndex, records } of answer.partitions) {
          const from = asked.get(partitionIndex);
          // A fetch session may answer for partitions not asked for this time: stale, ignored.
          if (from === undefined || !records || records.length === 0) continue;
          const read = recordsOf(partitionIndex, records, from);
          this.recordSizes.observe(records);
          if (read.next === null) continue;
          if (read.records.length === 0) this.positions.set(partitionIndex, read.next);
          else
            batches.push({
              partition: partitionIndex,
              from,
              records: read.records,
              next: read.next,
            });
        }
      }
    }
    return batches;
  }

  /**
   * A partition asked from an offset no longer in its log (retention removed it) is read from its
   * first offset, as kafkajs does with `fromBeginning`. Any other failure is thrown.
   */
  private outOfRange(error: unknown, generation: number): undefined {
    const response = (error as { response?: FetchResponse }).response;
    const moved: number[] = [];
    for (const answer of response?.responses ?? []) {
      for (const partition of answer.partitions) {
        if (partition.errorCode !== OFFSET_OUT_OF_RANGE) continue;
        if (generation === this.generation && this.positions.has(partition.partitionIndex)) {
          this.positions.set(partition.partitionIndex, partition.logStartOffset);
          moved.push(partition.partitionIndex);
        }
      }
    }
    if (moved.length === 0) throw error;
    this.warn(
      `${this.settings.topic} partitions ${moved.join(', ')}: offset out of range, read from their first`,
    );
    return undefined;
  }

  /** Hands the batches over, a bounded number at once; each moves its partition on if read. */
  private async handOver(
    batches: { partition: number; from: bigint; records: ConsumedRecord[]; next: bigint }[],
    generation: number,
    events: ConsumerClientEvents,
  ): Promise<void> {
    const topic = this.settings.topic;
    const liveness = {
      isActive: () => this.running && generation === this.generation,
      heartbeat: async () => undefined,
    };
    let index = 0;
    const worker = async () => {
      while (index < batches.length) {
        const batch = batches[index++];
        const taken = await events.batch(
          { topic, partition: batch.partition, records: batch.records },
          liveness,
        );
        if (taken === 0 || !liveness.isActive()) continue;
        this.positions.set(
          batch.partition,
          taken >= batch.records.length ? batch.next : BigInt(batch.records[taken].offset),
        );
      }
    };
    const workers = Math.max(
      1,
      Math.min(this.settings.partitionsConsumedConcurrently, batches.length),
    );
    await Promise.all(Array.from({ length: workers }, worker));
  }

  async commit(
    offsets: readonly { topic: string; partition: number; offset: string }[],
  ): Promise<void> {
    // A commit the coordinator refuses mid-rebalance is retried by the library after a rejoin,
    // under the new generation, for partitions that may have moved: none is sent until the join.
    if (!this.consumer || this.rebalancing) return;
    await this.consumer.commit({
      offsets: offsets.map(({ topic, partition, offset }) => ({
        topic,
        partition,
        offset: BigInt(offset),
        leaderEpoch: -1,
      })),
    });
  }

  async close(): Promise<void> {
    this.running = false;
    const consumer = this.consumer;
    if (!consumer) return;
    await this.loop?.catch(() => undefined);
    // Leaves the group first, so the partitions move to the others at once.
    await consumer.close(true);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
