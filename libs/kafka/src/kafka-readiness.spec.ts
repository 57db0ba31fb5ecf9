import { Admin, Kafka } from 'kafkajs';
import { KafkaReadiness } from './kafka-readiness';

/** A Kafka whose admin clients the test drives: each connect waits for `connected`. */
function fakeKafka(options: { brokers?: number; failDescribe?: () => boolean } = {}) {
  const made: { connects: number; describes: number; disconnects: number }[] = [];
  let connect!: () => void;
  let connected = new Promise<void>((resolve) => (connect = resolve));
  const kafka: Pick<Kafka, 'admin'> = {
    admin: () => {
      const counts = { connects: 0, describes: 0, disconnects: 0 };
      made.push(counts);
      return {
        connect: async () => {
          counts.connects++;
          await connected;
        },
        describeCluster: async () => {
          counts.describes++;
          if (options.failDescribe?.()) throw new Error('Connection closed');
          return {
            brokers: Array.from({ length: options.brokers ?? 1 }, (_, i) => ({ nodeId: i })),
          };
        },
        disconnect: async () => void counts.disconnects++,
      } as unknown as Admin;
    },
  };
  return {
    kafka,
    made,
    connect: () => connect(),
    reset: () => (connected = new Promise<void>((resolve) => (connect = resolve))),
  };
}

describe('KafkaReadiness', () => {
  it('answers probes that come together with one client and one request', async () => {
    const fake = fakeKafka();
    const readiness = new KafkaReadiness(fake.kafka);
    const probes = [readiness.checkReadiness(), readiness.checkReadiness()];
    fake.connect();
    expect(await Promise.all(probes)).toEqual([undefined, undefined]);
    expect(fake.made).toEqual([{ connects: 1, describes: 1, disconnects: 0 }]);
    // The next probe reuses the client.
    expect(await readiness.checkReadiness()).toBeUndefined();
    expect(fake.made).toEqual([{ connects: 1, describes: 2, disconnects: 0 }]);
  });

  it('says why it is not ready, and starts afresh with a new client after a failure', async () => {
    let failing = true;
    const fake = fakeKafka({ failDescribe: () => failing });
    fake.connect();
    const readiness = new KafkaReadiness(fake.kafka);
    expect(await readiness.checkReadiness()).toBe('broker unreachable (Connection closed)');
    failing = false;
    expect(await readiness.checkReadiness()).toBeUndefined();
    expect(fake.made).toEqual([
      { connects: 1, describes: 1, disconnects: 1 },
      { connects: 1, describes: 1, disconnects: 0 },
    ]);
  });

  it('never fails on a client another probe dropped meanwhile', async () => {
    // One probe's request fails while the next probe's client is still connecting: the second
    // answers from its own client, not from an undefined one.
    let failures = 1;
    const fake = fakeKafka({ failDescribe: () => failures-- > 0 });
    fake.connect();
    const readiness = new KafkaReadiness(fake.kafka);
    const first = readiness.checkReadiness();
    expect(await first).toBe('broker unreachable (Connection closed)');
    fake.reset();
    const second = readiness.checkReadiness();
    const third = readiness.checkReadiness();
    fake.connect();
    expect(await Promise.all([second, third])).toEqual([undefined, undefined]);
  });

  it('answers a probe from its own client when an older probe fails meanwhile', async () => {
    // The first client's requests fail, each when the test says; the second client connects
    // when the test says and then answers.
    const gates: (() => void)[] = [];
    const gate = () => new Promise<void>((resolve) => gates.push(resolve));
    let connectSecond!: () => void;
    const clients: Admin[] = [
      {
        connect: async () => undefined,
        describeCluster: async () => {
          await gate();
          throw new Error('Connection closed');
        },
        disconnect: async () => undefined,
      } as unknown as Admin,
      {
        connect: () => new Promise<void>((resolve) => (connectSecond = resolve)),
        describeCluster: async () => ({ brokers: [{ nodeId: 1 }] }),
        disconnect: async () => undefined,
      } as unknown as Admin,
    ];
    const readiness = new KafkaReadiness({ admin: () => clients.shift()! });
    const older = [readiness.checkReadiness(), readiness.checkReadiness()];
    await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    const next = readiness.checkReadiness();
    await new Promise((resolve) => setImmediate(resolve));
    // Any other request of the first client fails now, while the second connects.
    for (const open of gates.splice(0)) open();
    await new Promise((resolve) => setImmediate(resolve));
    connectSecond();
    expect(await Promise.all(older)).toEqual([
      'broker unreachable (Connection closed)',
      'broker unreachable (Connection closed)',
    ]);
    expect(await next).toBeUndefined();
  });

  it('reports a cluster without brokers', async () => {
    const fake = fakeKafka({ brokers: 0 });
    fake.connect();
    expect(await new KafkaReadiness(fake.kafka).checkReadiness()).toBe(
      'no broker in the cluster metadata',
    );
  });

  it('lets its client go at shutdown', async () => {
    const fake = fakeKafka();
    fake.connect();
    const readiness = new KafkaReadiness(fake.kafka);
    await readiness.checkReadiness();
    await readiness.onApplicationShutdown();
    expect(fake.made[0].disconnects).toBe(1);
  });
});
