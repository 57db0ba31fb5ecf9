import { Logger } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { BatchConsumer, BatchConsumerOptions, MAX_RESTART_DELAY_MS } from './batch-consumer';
import { KafkajsConsumerClient } from './kafkajs-consumer-client';

/** A BatchConsumer over kafkajs clients made from `kafka` (a stand-in). */
function overKafkajs(
  kafka: Kafka,
  options: BatchConsumerOptions & { partitionsConsumedConcurrently?: number },
  handler: ConstructorParameters<typeof BatchConsumer>[2],
): BatchConsumer {
  const settings = {
    sessionTimeoutMs: 6_000,
    maxBytesPerPartition: 1024 * 1024,
    partitionsConsumedConcurrently: 1,
    ...options,
  };
  return new BatchConsumer(() => new KafkajsConsumerClient(kafka, settings), options, handler);
}

/** Stands in for a kafkajs consumer: records what it was asked and lets a test raise CRASH. */
class FakeConsumer {
  readonly events = {
    GROUP_JOIN: 'consumer.group_join',
    CRASH: 'consumer.crash',
    REBALANCING: 'consumer.rebalancing',
  };
  private readonly handlers = new Map<string, (event: unknown) => void>();
  running = false;
  connected = false;

  on(event: string, handler: (event: unknown) => void) {
    this.handlers.set(event, handler);
    return () => this.handlers.delete(event);
  }
  async connect() {
    this.connected = true;
  }
  async subscribe() {}
  /** What the consumer was run with (its eachBatch), and the commits it was asked for. */
  runOptions: { eachBatch?: (payload: unknown) => Promise<void> } = {};
  readonly commits: { partition: number; offset: string }[][] = [];
  async run(options: { eachBatch?: (payload: unknown) => Promise<void> }) {
    this.running = true;
    this.runOptions = options;
  }
  async commitOffsets(offsets: { partition: number; offset: string }[]) {
    this.commits.push(offsets.map(({ partition, offset }) => ({ partition, offset })));
  }
  /** Hands a batch of `offsets` on `partition` (0 unless said) to the consumer as kafkajs would. */
  deliver(offsets: string[], resolved: string[] = [], partition = 0) {
    return this.runOptions.eachBatch!({
      batch: {
        topic: 't',
        partition,
        messages: offsets.map((offset) => ({
          offset,
          key: null,
          value: Buffer.from('{}'),
          timestamp: '0',
        })),
      },
      heartbeat: async () => undefined,
      isRunning: () => true,
      isStale: () => false,
      resolveOffset: (offset: string) => resolved.push(offset),
    });
  }
  async disconnect() {
    this.connected = false;
    this.running = false;
  }
  /** What kafkajs emits when its group starts to rebalance. */
  rebalance() {
    this.handlers.get(this.events.REBALANCING)?.({ payload: { groupId: 'g' } });
  }
  /** What kafkajs emits when a consumer crashes; `restart` says whether kafkajs restarts it. */
  crash(restart: boolean) {
    this.running = false;
    const error = Object.assign(new Error('the broker said no'), {
      name: 'KafkaJSNonRetriableError',
    });
    this.handlers.get(this.events.CRASH)?.({ payload: { error, groupId: 'g', restart } });
  }
}

describe('BatchConsumer after kafkajs gives a consumer up', () => {
  let consumers: FakeConsumer[];
  let batchConsumer: BatchConsumer;

  beforeEach(() => {
    jest.useFakeTimers();
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    consumers = [];
    const kafka = {
      consumer: () => {
        const consumer = new FakeConsumer();
        consumers.push(consumer);
        return consumer;
      },
    } as unknown as Kafka;
    batchConsumer = overKafkajs(kafka, { groupId: 'g', topic: 't' }, async () => undefined);
  });

  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  /** Lets the restart's promise chain run after the timer fired. */
  const settle = async () => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };

  it('starts a fresh consumer when kafkajs will not restart the one that crashed', async () => {
    await batchConsumer.start();
    consumers[0].crash(false);
    await jest.advanceTimersByTimeAsync(999);
    expect(consumers).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    await settle();
    expect(consumers).toHaveLength(2);
    expect(consumers[1]).toMatchObject({ connected: true, running: true });
  });

  it('backs off longer each time the fresh one is given up too', async () => {
    await batchConsumer.start();
    consumers[0].crash(false);
    await jest.advanceTimersByTimeAsync(1_000);
    await settle();
    consumers[1].crash(false);
    await jest.advanceTimersByTimeAsync(1_999);
    expect(consumers).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    await settle();
    expect(consumers).toHaveLength(3);
  });

  it('never waits more than 5 s between tries, however long Kafka stays away', async () => {
    await batchConsumer.start();
    for (let crash = 0; crash < 8; crash++) {
      consumers.at(-1)!.crash(false);
      await jest.advanceTimersByTimeAsync(MAX_RESTART_DELAY_MS - 1);
      await settle();
      if (crash >= 3) expect(consumers).toHaveLength(crash + 1);
      await jest.advanceTimersByTimeAsync(1);
      await settle();
      expect(consumers).toHaveLength(crash + 2);
    }
    expect(MAX_RESTART_DELAY_MS).toBe(5_000);
  });

  it('leaves a crash that kafkajs restarts itself to kafkajs', async () => {
    await batchConsumer.start();
    consumers[0].crash(true);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(consumers).toHaveLength(1);
  });

  it('starts nothing once stopped', async () => {
    await batchConsumer.start();
    consumers[0].crash(false);
    await batchConsumer.stop();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(consumers).toHaveLength(1);
  });
});

describe('BatchConsumer commits', () => {
  let consumer: FakeConsumer;
  const kafka = {
    consumer: () => (consumer = new FakeConsumer()),
  } as unknown as Kafka;

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('reads on without waiting for a commit, and commits a finished batch within 50 ms', async () => {
    const handled: string[][] = [];
    const batchConsumer = overKafkajs(kafka, { groupId: 'g', topic: 't' }, async (records) => {
      handled.push(records.map((r) => r.offset));
    });
    await batchConsumer.start();
    const resolved: string[] = [];
    await consumer.deliver(['5', '6'], resolved);
    expect(resolved).toEqual(['6']);
    expect(consumer.commits).toEqual([]);
    await consumer.deliver(['7'], resolved);
    expect(handled).toEqual([['5', '6'], ['7']]);
    await jest.advanceTimersByTimeAsync(50);
    // The two batches' completions go in one commit: the offset after the last finished record.
    expect(consumer.commits).toEqual([[{ partition: 0, offset: '8' }]]);
  });

  it('commits what finished at once when the group starts to rebalance', async () => {
    const batchConsumer = overKafkajs(kafka, { groupId: 'g', topic: 't' }, async () => undefined);
    await batchConsumer.start();
    await consumer.deliver(['5', '6']);
    expect(consumer.commits).toEqual([]);
    // The partitions' next owners start right after what this member finished.
    consumer.rebalance();
    expect(consumer.commits).toEqual([[{ partition: 0, offset: '7' }]]);
    await jest.advanceTimersByTimeAsync(200);
    expect(consumer.commits).toHaveLength(1);
  });

  it('commits the partitions finished meanwhile in one request, not one per partition', async () => {
    const batchConsumer = overKafkajs(
      kafka,
      { groupId: 'g', topic: 't', partitionsConsumedConcurrently: 3 },
      async () => undefined,
    );
    await batchConsumer.start();
    await consumer.deliver(['5'], [], 0);
    await consumer.deliver(['10', '11'], [], 1);
    await consumer.deliver(['3'], [], 2);
    await jest.advanceTimersByTimeAsync(50);
    // Each request shares the consumer's connection with its fetches, which the broker answers
    // one at a time: one request for the moment's completions, whatever their partitions.
    expect(consumer.commits).toEqual([
      [
        { partition: 0, offset: '6' },
        { partition: 1, offset: '12' },
        { partition: 2, offset: '4' },
      ],
    ]);
    // Nothing moved since: nothing more is asked.
    await jest.advanceTimersByTimeAsync(200);
    expect(consumer.commits).toHaveLength(1);
  });

  it('never commits past a batch whose handler failed', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    let stop: () => Promise<void> = async () => undefined;
    const batchConsumer = overKafkajs(kafka, { groupId: 'g', topic: 't' }, async () => {
      void stop();
      throw new Error('store down');
    });
    stop = () => batchConsumer.stop();
    await batchConsumer.start();
    const resolved: string[] = [];
    const delivered = consumer.deliver(['5'], resolved);
    await jest.advanceTimersByTimeAsync(10_000);
    await delivered;
    expect(resolved).toEqual([]);
    // At most the failed record's own offset (it is read again from there), never past it.
    expect(consumer.commits.flat().every((commit) => BigInt(commit.offset) <= 5n)).toBe(true);
    jest.restoreAllMocks();
  });

  it("in pipelined mode takes no more of a batch than the partition's window has room for", async () => {
    const finishers: (() => void)[] = [];
    const handled: string[][] = [];
    const batchConsumer = overKafkajs(
      kafka,
      { groupId: 'g', topic: 't', maxUnfinishedPerPartition: 4 },
      async (records) => {
        handled.push(records.map((r) => r.offset));
        return records.map((r) => ({
          offset: r.offset,
          done: new Promise<void>((resolve) => finishers.push(resolve)),
        }));
      },
    );
    await batchConsumer.start();
    const resolved: string[] = [];
    // Six records fetched at once, a window of four: the last two are read again later.
    await consumer.deliver(['1', '2', '3', '4', '5', '6'], resolved);
    expect(handled).toEqual([['1', '2', '3', '4']]);
    expect(resolved).toEqual(['4']);
    // Read again, they wait until a quarter of the window is free, then go in.
    const again = consumer.deliver(['5', '6'], resolved);
    await jest.advanceTimersByTimeAsync(10);
    expect(handled).toHaveLength(1);
    finishers[0]();
    await jest.advanceTimersByTimeAsync(10);
    await again;
    expect(handled).toEqual([['1', '2', '3', '4'], ['5']]);
    expect(resolved).toEqual(['4', '5']);
  });

  it('in pipelined mode commits only below the lowest record still under way', async () => {
    let finishSix: () => void = () => undefined;
    const batchConsumer = overKafkajs(
      kafka,
      { groupId: 'g', topic: 't', maxUnfinishedPerPartition: 10 },
      async () => [{ offset: '6', done: new Promise<void>((resolve) => (finishSix = resolve)) }],
    );
    await batchConsumer.start();
    await consumer.deliver(['5', '6', '7']);
    await jest.advanceTimersByTimeAsync(50);
    expect(consumer.commits).toEqual([[{ partition: 0, offset: '6' }]]);
    finishSix();
    await jest.advanceTimersByTimeAsync(50);
    expect(consumer.commits.at(-1)).toEqual([{ partition: 0, offset: '8' }]);
  });
});
