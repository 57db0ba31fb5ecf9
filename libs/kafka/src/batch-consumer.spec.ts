import { Logger } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { BatchConsumer, MAX_RESTART_DELAY_MS } from './batch-consumer';

/** Stands in for a kafkajs consumer: records what it was asked and lets a test raise CRASH. */
class FakeConsumer {
  readonly events = { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' };
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
  async run() {
    this.running = true;
  }
  async disconnect() {
    this.connected = false;
    this.running = false;
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
    batchConsumer = new BatchConsumer(
      kafka,
      { groupId: 'g', topic: 't', sessionTimeoutMs: 6_000 },
      async () => undefined,
    );
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
