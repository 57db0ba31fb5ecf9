import type { Kafka, Message } from 'kafkajs';
import { KafkaProducer, PublishTimeoutError } from './kafka-producer';
import { KafkajsProducerClient } from './kafkajs-producer-client';

/** A kafkajs stand-in whose sends finish only when the test says so. */
function fakeKafka() {
  const sends: { messages: Message[]; finish: (error?: Error) => void }[] = [];
  const producer = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    send: ({ messages }: { messages: Message[] }) =>
      new Promise<void>((resolve, reject) =>
        sends.push({ messages, finish: (error) => (error ? reject(error) : resolve()) }),
      ),
  };
  return { kafka: { producer: () => producer } as unknown as Kafka, sends };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setImmediate(r));
  expect(condition()).toBe(true);
};

describe('KafkaProducer.publish', () => {
  it('groups records published while a send is under way into the next send', async () => {
    const { kafka, sends } = fakeKafka();
    const producer = new KafkaProducer(new KafkajsProducerClient(kafka));
    const first = producer.publish('t', { value: 'a' });
    await until(() => sends.length === 1);
    const second = producer.publish('t', { value: 'b' });
    const third = producer.publish('t', { value: 'c' });
    sends[0].finish();
    await first;
    await until(() => sends.length === 2);
    expect(sends[1].messages.map((m) => m.value)).toEqual(['b', 'c']);
    sends[1].finish();
    await Promise.all([second, third]);
  });

  it('withdraws a queued record whose caller stopped waiting: it is never sent', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const { kafka, sends } = fakeKafka();
      const producer = new KafkaProducer(new KafkajsProducerClient(kafka));
      const inFlight = producer.publish('t', { value: 'in-flight' }, 1_000);
      await until(() => sends.length === 1);
      const queued = producer.publish('t', { value: 'queued' }, 1_000);
      jest.advanceTimersByTime(1_000);
      await expect(inFlight).rejects.toBeInstanceOf(PublishTimeoutError);
      await expect(queued).rejects.toBeInstanceOf(PublishTimeoutError);
      sends[0].finish();
      const after = producer.publish('t', { value: 'after' });
      await until(() => sends.length === 2);
      expect(sends[1].messages.map((m) => m.value)).toEqual(['after']);
      sends[1].finish();
      await after;
    } finally {
      jest.useRealTimers();
    }
  });

  it('sends the records of one publishAll together, in order, in one send', async () => {
    const { kafka, sends } = fakeKafka();
    const producer = new KafkaProducer(new KafkajsProducerClient(kafka));
    const batch = producer.publishAll('t', [{ value: 'a' }, { value: 'b' }, { value: 'c' }], 1_000);
    await until(() => sends.length === 1);
    expect(sends[0].messages.map((m) => m.value)).toEqual(['a', 'b', 'c']);
    sends[0].finish();
    await batch;
    expect(sends).toHaveLength(1);
  });

  it('withdraws every queued record of a publishAll whose caller stopped waiting', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const { kafka, sends } = fakeKafka();
      const producer = new KafkaProducer(new KafkajsProducerClient(kafka));
      const inFlight = producer.publish('t', { value: 'in-flight' });
      await until(() => sends.length === 1);
      const queued = producer.publishAll('t', [{ value: 'q1' }, { value: 'q2' }], 1_000);
      jest.advanceTimersByTime(1_000);
      await expect(queued).rejects.toBeInstanceOf(PublishTimeoutError);
      sends[0].finish();
      await inFlight;
      const after = producer.publish('t', { value: 'after' });
      await until(() => sends.length === 2);
      expect(sends[1].messages.map((m) => m.value)).toEqual(['after']);
      sends[1].finish();
      await after;
    } finally {
      jest.useRealTimers();
    }
  });

  it('rejects every record of a failed send', async () => {
    const { kafka, sends } = fakeKafka();
    const producer = new KafkaProducer(new KafkajsProducerClient(kafka));
    const first = producer.publish('t', { value: 'a' });
    await until(() => sends.length === 1);
    sends[0].finish(new Error('broker gone'));
    await expect(first).rejects.toThrow('broker gone');
  });
});

describe('KafkaProducer producers', () => {
  /** A kafkajs stand-in that makes a producer per call, each with sends the test finishes. */
  function kafkaWithProducers() {
    const made: { topic?: string; finish: () => void }[][] = [];
    const kafka = {
      producer: () => {
        const sends: { topic?: string; finish: () => void }[] = [];
        made.push(sends);
        return {
          connect: async () => undefined,
          disconnect: async () => undefined,
          send: ({ topic }: { topic: string }) =>
            new Promise<void>((resolve) => sends.push({ topic, finish: resolve })),
        };
      },
    } as unknown as Kafka;
    return { kafka, made };
  }

  it("gives each topic a producer of its own, so one topic's send in flight never holds another's", async () => {
    const { kafka, made } = kafkaWithProducers();
    const producer = new KafkaProducer(new KafkajsProducerClient(kafka));
    const events = producer.send('events', [{ value: 'e' }]);
    const dlq = producer.send('dlq', [{ value: 'd' }]);
    await until(() => made.length === 2 && made.every((sends) => sends.length === 1));
    expect(made.map((sends) => sends[0].topic)).toEqual(['events', 'dlq']);
    made[1][0].finish();
    await dlq;
    made[0][0].finish();
    await events;
  });

  it('keeps one producer for a topic, so its records go in order through one', async () => {
    const { kafka, made } = kafkaWithProducers();
    const producer = new KafkaProducer(new KafkajsProducerClient(kafka));
    const first = producer.send('events', [{ value: 'a' }]);
    await until(() => made[0]?.length === 1);
    made[0][0].finish();
    await first;
    const second = producer.send('events', [{ value: 'b' }]);
    await until(() => made[0].length === 2);
    made[0][1].finish();
    await second;
    expect(made).toHaveLength(1);
  });
});
