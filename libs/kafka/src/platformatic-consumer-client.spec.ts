import { EventEmitter } from 'node:events';
import { ConsumerClientEvents, FetchedBatch } from './consumer-client';
import {
  PlatformaticConsumer,
  MIN_FETCH_BYTES,
  PlatformaticConsumerClient,
  RecordSizes,
  recordsOf,
  ROUND_ROBIN_PROTOCOL,
} from './platformatic-consumer-client';

interface AskedPartition {
  partition: number;
  offset: bigint;
}

/**
 * Stands in for `@platformatic/kafka`'s consumer: a topic `t` with two partitions on one broker,
 * each a list of values whose offsets are their indexes, and the group's committed offsets.
 */
class StandInConsumer extends EventEmitter {
  readonly topics = { track: jest.fn() };
  readonly log = new Map<number, string[]>([
    [0, []],
    [1, []],
  ]);
  readonly committed = new Map<number, bigint>();
  earliest = 0n;
  assignment = [0, 1];
  readonly fetches: AskedPartition[][] = [];
  readonly bytesAsked: Map<number, number>[] = [];
  /** Bytes per record the batches it answers say they hold. */
  recordBytes = 100;
  readonly commits: unknown[] = [];
  joinOptions: unknown;
  closed = false;
  /** The next fetch fails with this (once). */
  failNext: Error | undefined;

  async joinGroup(options: unknown) {
    this.joinOptions = options;
    this.rejoin();
    return 'member';
  }

  rejoin(assignment = this.assignment) {
    this.emit('consumer:group:join', {
      groupId: 'g',
      memberId: 'member',
      assignments: [{ topic: 't', partitions: assignment }],
    });
  }

  async metadata() {
    return {
      topics: new Map([['t', { id: 'topic-id', partitions: [{ leader: 1 }, { leader: 1 }] }]]),
    };
  }

  async listCommittedOffsets() {
    return new Map([['t', [0, 1].map((p) => this.committed.get(p) ?? -1n)]]);
  }

  async listOffsets() {
    return new Map([['t', [this.earliest, this.earliest]]]);
  }

  async fetch(options: {
    topics: {
      partitions: { partition: number; fetchOffset: bigint; partitionMaxBytes: number }[];
    }[];
  }) {
    const asked = options.topics[0].partitions.map((p) => ({
      partition: p.partition,
      offset: p.fetchOffset,
    }));
    this.fetches.push(asked);
    this.bytesAsked.push(
      new Map(options.topics[0].partitions.map((p) => [p.partition, p.partitionMaxBytes])),
    );
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = undefined;
      throw error;
    }
    const partitions = asked.map(({ partition, offset }) => {
      const values = (this.log.get(partition) ?? []).slice(Number(offset));
      return {
        partitionIndex: partition,
        errorCode: 0,
        logStartOffset: 0n,
        records:
          values.length === 0
            ? null
            : [
                {
                  firstOffset: offset,
                  length: values.length * this.recordBytes,
                  lastOffsetDelta: values.length - 1,
                  attributes: 0,
                  firstTimestamp: 1_000n,
                  records: values.map((value, index) => ({
                    offsetDelta: index,
                    timestampDelta: BigInt(index),
                    key: Buffer.from(`key-${partition}`),
                    value: Buffer.from(value),
                    headers: [[Buffer.from('traceparent'), Buffer.from('00-abc')]],
                  })),
                },
              ],
      };
    });
    // As a broker's long poll: an empty answer comes after a while, not at once.
    if (partitions.every((p) => p.records === null)) await pause(2);
    return { responses: [{ topicId: 'topic-id', partitions }] };
  }

  async commit(options: unknown) {
    this.commits.push(options);
  }

  async close(force: boolean) {
    this.closed = force;
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits for `check` to hold, looking again as the loop moves on (at most 2 s). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met within 2 s');
    await pause(1);
  }
}

const settings = {
  groupId: 'g',
  topic: 't',
  sessionTimeoutMs: 10_000,
  partitionsConsumedConcurrently: 2,
  maxBytesPerPartition: 1024,
};

describe('PlatformaticConsumerClient', () => {
  let consumer: StandInConsumer;
  let client: PlatformaticConsumerClient;
  let handed: FetchedBatch[];
  let full: Set<number>;
  let rooms: Map<number, number>;
  let read: (batch: FetchedBatch) => number;
  let events: ConsumerClientEvents & { joins: number[]; failures: Error[] };

  beforeEach(() => {
    consumer = new StandInConsumer();
    client = new PlatformaticConsumerClient(
      () => consumer as unknown as PlatformaticConsumer,
      settings,
    );
    handed = [];
    full = new Set();
    rooms = new Map();
    read = (batch) => batch.records.length;
    const joins: number[] = [];
    const failures: Error[] = [];
    events = {
      joins,
      failures,
      batch: async (batch) => {
        handed.push(batch);
        return read(batch);
      },
      room: (_topic, partition) => (full.has(partition) ? 0 : (rooms.get(partition) ?? Infinity)),
      joined: (partitions) => joins.push(partitions),
      unassigned: () => undefined,
      problem: () => undefined,
      failed: (error) => failures.push(error),
    };
  });

  afterEach(() => client.close());

  const offsetsHanded = (partition: number) =>
    handed.filter((b) => b.partition === partition).flatMap((b) => b.records.map((r) => r.offset));

  it("joins with kafkajs's assignor, so members of either client share a group", async () => {
    await client.start(events);
    expect(consumer.topics.track).toHaveBeenCalledWith('t');
    expect(consumer.joinOptions).toMatchObject({
      protocols: [ROUND_ROBIN_PROTOCOL],
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
    });
    expect(events.joins).toEqual([2]);
  });

  it('reads each partition from its committed offset, or from its first when none is committed', async () => {
    consumer.log.set(0, ['a', 'b', 'c']);
    consumer.log.set(1, ['d', 'e']);
    consumer.committed.set(0, 2n);
    await client.start(events);
    await until(() => handed.length >= 2);
    expect(offsetsHanded(0)).toEqual(['2']);
    expect(offsetsHanded(1)).toEqual(['0', '1']);
    const [first] = handed.filter((b) => b.partition === 0)[0].records;
    expect(first).toEqual({
      partition: 0,
      offset: '2',
      key: 'key-0',
      value: Buffer.from('c'),
      timestamp: '1000',
      headers: { traceparent: Buffer.from('00-abc') },
    });
  });

  it('reads on after a batch it handed over, and never hands a record over twice', async () => {
    consumer.log.set(0, ['a']);
    await client.start(events);
    await until(() => handed.length === 1);
    consumer.log.get(0)!.push('b', 'c');
    await until(() => offsetsHanded(0).length === 3);
    await until(() => consumer.fetches.length > 5);
    expect(offsetsHanded(0)).toEqual(['0', '1', '2']);
    expect(consumer.fetches.at(-1)).toContainEqual({ partition: 0, offset: 3n });
  });

  it('leaves a partition whose window is full out of its fetches while the others are read', async () => {
    consumer.log.set(0, ['a', 'b']);
    consumer.log.set(1, ['c']);
    full.add(1);
    await client.start(events);
    await until(() => offsetsHanded(0).length === 2);
    consumer.log.get(0)!.push('d');
    await until(() => offsetsHanded(0).length === 3);
    expect(offsetsHanded(1)).toEqual([]);
    expect(consumer.fetches.flat().some((asked) => asked.partition === 1)).toBe(false);
    // Room again: the partition is read from where it stood.
    full.delete(1);
    await until(() => offsetsHanded(1).length === 1);
    expect(offsetsHanded(1)).toEqual(['0']);
  });

  it('reads a batch again when it was not read (the handler gave it back)', async () => {
    consumer.log.set(0, ['a', 'b']);
    let refusals = 1;
    read = (batch) => (batch.partition === 0 && refusals-- > 0 ? 0 : batch.records.length);
    await client.start(events);
    await until(() => offsetsHanded(0).length === 4);
    expect(offsetsHanded(0)).toEqual(['0', '1', '0', '1']);
  });

  it('reads on after the records the handler took, and fetches the rest again', async () => {
    consumer.log.set(0, ['a', 'b', 'c', 'd']);
    let firstBatch = true;
    // The window had room for two records of the first batch.
    read = (batch) => {
      const taken = firstBatch ? 2 : batch.records.length;
      firstBatch = false;
      return taken;
    };
    await client.start(events);
    await until(() => offsetsHanded(0).length === 6);
    expect(offsetsHanded(0)).toEqual(['0', '1', '2', '3', '2', '3']);
    await until(() => consumer.fetches.length > 4);
    expect(consumer.fetches.at(-1)).toContainEqual({ partition: 0, offset: 4n });
  });

  it("asks each partition for about as many records' bytes as its window has room for", async () => {
    const roomy = new PlatformaticConsumerClient(
      () => consumer as unknown as PlatformaticConsumer,
      { ...settings, maxBytesPerPartition: 1024 * 1024 },
    );
    consumer.recordBytes = 600;
    consumer.log.set(0, ['a', 'b']);
    consumer.log.set(1, ['c']);
    rooms.set(0, 100).set(1, 5_000);
    try {
      await roomy.start(events);
      await until(() => handed.length === 2 && consumer.fetches.length > 2);
      // Before any record was seen: the most a partition may bring.
      expect(consumer.bytesAsked[0]).toEqual(
        new Map([
          [0, 1024 * 1024],
          [1, 1024 * 1024],
        ]),
      );
      // Then 100 records of 600 bytes, and 5,000 of them up to the most a partition may bring.
      expect(consumer.bytesAsked.at(-1)).toEqual(
        new Map([
          [0, 60_000],
          [1, 1024 * 1024],
        ]),
      );
    } finally {
      await roomy.close();
    }
  });

  it('after a rejoin reads its new partitions from their committed offsets', async () => {
    consumer.log.set(1, ['a', 'b', 'c', 'd']);
    consumer.assignment = [0];
    await client.start(events);
    await until(() => consumer.fetches.length > 2);
    expect(offsetsHanded(1)).toEqual([]);
    consumer.committed.set(1, 3n);
    consumer.rejoin([0, 1]);
    await until(() => offsetsHanded(1).length === 1);
    expect(offsetsHanded(1)).toEqual(['3']);
    expect(events.joins).toEqual([1, 2]);
  });

  it('tells a batch handed over before a rejoin that it no longer owns its partition', async () => {
    consumer.log.set(0, ['a']);
    let liveAfterRejoin: boolean | undefined;
    events.batch = async (batch, liveness) => {
      handed.push(batch);
      if (handed.length === 1) {
        consumer.rejoin();
        liveAfterRejoin = liveness.isActive();
        return 0;
      }
      return batch.records.length;
    };
    await client.start(events);
    await until(() => handed.length === 2);
    expect(liveAfterRejoin).toBe(false);
    expect(offsetsHanded(0)).toEqual(['0', '0']);
  });

  it('reads from the first offset of a partition whose offset left the log', async () => {
    consumer.log.set(0, ['gone', 'gone', 'kept']);
    consumer.committed.set(0, 0n);
    consumer.failNext = Object.assign(new Error('OFFSET_OUT_OF_RANGE'), {
      response: {
        responses: [
          {
            topicId: 'topic-id',
            partitions: [{ partitionIndex: 0, errorCode: 1, logStartOffset: 2n }],
          },
        ],
      },
    });
    await client.start(events);
    await until(() => offsetsHanded(0).length === 1);
    expect(offsetsHanded(0)).toEqual(['2']);
  });

  it('tries again after a failed fetch, from the same offsets', async () => {
    consumer.log.set(0, ['a']);
    consumer.failNext = new Error('connection refused');
    await client.start(events);
    await until(() => handed.length === 1);
    expect(consumer.fetches[0]).toEqual(consumer.fetches[1]);
    expect(offsetsHanded(0)).toEqual(['0']);
  });

  it('gives up (for its BatchConsumer to replace it) once heartbeats stall', async () => {
    await client.start(events);
    const lastError = new Error('coordinator gone');
    consumer.emit('consumer:heartbeat:stalled', { lastError });
    expect(events.failures).toEqual([lastError]);
    const fetched = consumer.fetches.length;
    await pause(20);
    expect(consumer.fetches.length).toBeLessThanOrEqual(fetched + 1);
  });

  it('hands nothing over and commits nothing from the start of a rebalance to the join', async () => {
    let unassigned = 0;
    events.unassigned = () => unassigned++;
    await client.start(events);
    consumer.emit('consumer:group:rebalance', { groupId: 'g' });
    expect(unassigned).toBe(1);
    consumer.log.set(0, ['a']);
    await client.commit([{ topic: 't', partition: 0, offset: '1' }]);
    const fetched = consumer.fetches.length;
    await pause(20);
    expect(consumer.fetches).toHaveLength(fetched);
    expect(handed).toEqual([]);
    expect(consumer.commits).toEqual([]);
    // Joined again: read from the committed offsets, and commits go out.
    consumer.rejoin();
    await until(() => handed.length === 1);
    await client.commit([{ topic: 't', partition: 0, offset: '1' }]);
    expect(consumer.commits).toHaveLength(1);
  });

  it('commits the next offsets to read, in one request', async () => {
    await client.start(events);
    await client.commit([
      { topic: 't', partition: 0, offset: '7' },
      { topic: 't', partition: 1, offset: '3' },
    ]);
    expect(consumer.commits).toEqual([
      {
        offsets: [
          { topic: 't', partition: 0, offset: 7n, leaderEpoch: -1 },
          { topic: 't', partition: 1, offset: 3n, leaderEpoch: -1 },
        ],
      },
    ]);
  });

  it('stops fetching and closes the consumer (leaving the group) on close', async () => {
    await client.start(events);
    await client.close();
    const fetched = consumer.fetches.length;
    await pause(20);
    expect(consumer.fetches).toHaveLength(fetched);
    expect(consumer.closed).toBe(true);
  });
});

describe('recordsOf', () => {
  const batch = (firstOffset: bigint, values: string[], attributes = 0) => ({
    firstOffset,
    lastOffsetDelta: values.length - 1,
    attributes,
    firstTimestamp: 5n,
    records: values.map((value, index) => ({
      offsetDelta: index,
      timestampDelta: 0n,
      key: null,
      value: Buffer.from(value),
      headers: [],
    })),
  });

  it('leaves out records before the offset asked for, and names the next offset', () => {
    const read = recordsOf(3, [batch(10n, ['a', 'b', 'c'])] as never, 11n);
    expect(read.records.map((r) => [r.offset, r.value?.toString(), r.key])).toEqual([
      ['11', 'b', null],
      ['12', 'c', null],
    ]);
    expect(read.next).toBe(13n);
  });

  it('passes over control batches (transaction markers) but reads on after them', () => {
    const read = recordsOf(0, [batch(0n, ['a']), batch(1n, ['marker'], 0b10_0000)] as never, 0n);
    expect(read.records.map((r) => r.offset)).toEqual(['0']);
    expect(read.next).toBe(2n);
  });

  it('names no next offset when nothing came back', () => {
    expect(recordsOf(0, [], 4n)).toEqual({ records: [], next: null });
  });
});

describe('RecordSizes', () => {
  const batchOf = (records: number, bytes: number) =>
    ({ length: bytes, records: Array.from({ length: records }, () => ({})) }) as never;

  it('asks for the most a partition may bring until a record has been seen', () => {
    expect(new RecordSizes().bytesFor(10, 1_048_576)).toBe(1_048_576);
  });

  it("asks for the room's worth of records at their mean size, within the floor and the most", () => {
    const sizes = new RecordSizes();
    sizes.observe([batchOf(10, 6_000)]);
    expect(sizes.bytesFor(100, 1_048_576)).toBe(60_000);
    expect(sizes.bytesFor(1, 1_048_576)).toBe(MIN_FETCH_BYTES);
    expect(sizes.bytesFor(10_000, 1_048_576)).toBe(1_048_576);
    expect(sizes.bytesFor(Infinity, 1_048_576)).toBe(1_048_576);
  });

  it('follows the records as their size changes, and ignores batches without records', () => {
    const sizes = new RecordSizes();
    sizes.observe([batchOf(10, 1_000)]);
    for (let i = 0; i < 50; i++) sizes.observe([batchOf(10, 10_000), batchOf(0, 61)]);
    expect(sizes.bytesFor(100, 1_048_576)).toBeGreaterThan(99_000);
    expect(sizes.bytesFor(100, 1_048_576)).toBeLessThanOrEqual(100_000);
  });
});
