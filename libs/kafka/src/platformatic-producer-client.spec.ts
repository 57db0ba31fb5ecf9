import {
  keptBuffer,
  PlatformaticProducer,
  PlatformaticProducerClient,
  rememberedKeyHash,
  retryDelayMs,
  toPlatformaticMessage,
  warnedRetryDelay,
} from './platformatic-producer-client';

type Sent = { topic: string; keys: string[]; finish: (error?: Error) => void };

/** Stand-ins for the library's producers, one per topic, whose sends finish when told. */
function fakeProducers() {
  const sends: Sent[] = [];
  const made: string[] = [];
  const closed: string[] = [];
  const create = (topic: string): PlatformaticProducer =>
    ({
      send: ({ messages }: { messages: { key?: Buffer }[] }) =>
        new Promise((resolve, reject) =>
          sends.push({
            topic,
            keys: messages.map((m) => m.key?.toString() ?? ''),
            finish: (error) => (error ? reject(error) : resolve({})),
          }),
        ),
      close: async () => {
        closed.push(topic);
      },
    }) as unknown as PlatformaticProducer;
  return {
    sends,
    closed,
    made,
    create: (topic: string) => {
      made.push(topic);
      return create(topic);
    },
  };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setImmediate(r));
  expect(condition()).toBe(true);
};

describe('toPlatformaticMessage', () => {
  it('turns strings into buffers and headers into a map, leaving out what is absent', () => {
    const message = toPlatformaticMessage('t', {
      key: 'ep_1',
      value: '{"a":1}',
      headers: { traceparent: '00-ab', 'hookbase-origin': Buffer.from('ingest'), gone: undefined },
    });
    expect(message.topic).toBe('t');
    expect(message.key).toEqual(Buffer.from('ep_1'));
    expect(message.value).toEqual(Buffer.from('{"a":1}'));
    expect(
      [...(message.headers as Map<Buffer, Buffer>)].map(([k, v]) => [k.toString(), v.toString()]),
    ).toEqual([
      ['traceparent', '00-ab'],
      ['hookbase-origin', 'ingest'],
    ]);
  });

  it('sends a record without key, value or headers as such (a null key goes round-robin)', () => {
    expect(toPlatformaticMessage('t', { key: null, value: null })).toEqual({ topic: 't' });
    const buffer = Buffer.from([0xff, 0x00]);
    expect(toPlatformaticMessage('t', { key: buffer, value: buffer }).key).toBe(buffer);
  });
});

describe('keptBuffer', () => {
  it('makes the bytes of a repeating key or header name once, and keeps short header values only', () => {
    const traceparent = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    const record = {
      key: 'org_kept',
      value: '{}',
      headers: { traceparent, 'hookbase-origin': 'ingest' },
    };
    const first = toPlatformaticMessage('t', record);
    const second = toPlatformaticMessage('t', record);
    expect(second.key).toBe(first.key);
    expect(first.key).toEqual(Buffer.from('org_kept'));
    const entries = (message: typeof first) => [...(message.headers as Map<Buffer, Buffer>)];
    const [[traceName, traceValue], [originName, originValue]] = entries(first);
    const [[traceName2, traceValue2], [originName2, originValue2]] = entries(second);
    expect([traceName2, originName2, originValue2]).toEqual([traceName, originName, originValue]);
    expect(traceName2).toBe(traceName);
    expect(originValue2).toBe(originValue);
    // A trace context differs per record: made each time, never kept.
    expect(traceValue2).not.toBe(traceValue);
    expect(traceValue2.toString()).toBe(traceparent);
    // The value was never written through: a kept buffer still reads as its text.
    expect(keptBuffer('org_kept').toString()).toBe('org_kept');
  });

  it('hands a buffer back as it is, and keeps texts apart that differ only beyond ASCII', () => {
    const buffer = Buffer.from('ep_1');
    expect(keptBuffer(buffer)).toBe(buffer);
    expect(keptBuffer('caf\u00e9').equals(Buffer.from('caf\u00e9'))).toBe(true);
    expect(keptBuffer('caf\u00e8').equals(Buffer.from('caf\u00e8'))).toBe(true);
  });

  it('starts over past its bound, still answering the right bytes', () => {
    const first = keptBuffer('org_0');
    for (let i = 1; i <= 10_001; i++) keptBuffer(`org_${i}`);
    const again = keptBuffer('org_0');
    expect(again).not.toBe(first);
    expect(again.toString()).toBe('org_0');
  });
});

describe('PlatformaticProducerClient', () => {
  it("sends a topic's requests one at a time, in the order given", async () => {
    const { sends, create } = fakeProducers();
    const client = new PlatformaticProducerClient(create);
    const first = client.send('events', [{ key: 'a', value: 'x' }]);
    const second = client.send('events', [{ key: 'b', value: 'y' }]);
    await until(() => sends.length === 1);
    // The second waits for the first to be acknowledged.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(sends).toHaveLength(1);
    sends[0].finish();
    await first;
    await until(() => sends.length === 2);
    expect(sends.map((s) => s.keys)).toEqual([['a'], ['b']]);
    sends[1].finish();
    await second;
  });

  it("gives each topic a producer of its own, so one topic's send never holds another's", async () => {
    const { sends, create, made } = fakeProducers();
    const client = new PlatformaticProducerClient(create);
    const events = client.send('events', [{ value: 'e' }]);
    const dlq = client.send('dlq', [{ value: 'd' }]);
    await until(() => sends.length === 2);
    expect(made).toEqual(['events', 'dlq']);
    sends[1].finish();
    await dlq;
    sends[0].finish();
    await events;
    const again = client.send('events', [{ value: 'f' }]);
    await until(() => sends.length === 3);
    sends[2].finish();
    await again;
    expect(made).toEqual(['events', 'dlq']);
  });

  it('rejects a failed send and still sends the next one', async () => {
    const { sends, create } = fakeProducers();
    const client = new PlatformaticProducerClient(create);
    const failed = client.send('events', [{ key: 'a', value: 'x' }]);
    const next = client.send('events', [{ key: 'b', value: 'y' }]);
    await until(() => sends.length === 1);
    sends[0].finish(new Error('broker gone'));
    await expect(failed).rejects.toThrow('broker gone');
    await until(() => sends.length === 2);
    sends[1].finish();
    await expect(next).resolves.toBeUndefined();
  });

  it('closes every producer it made', async () => {
    const { sends, create, closed } = fakeProducers();
    const client = new PlatformaticProducerClient(create);
    const a = client.send('events', [{ value: 'e' }]);
    const b = client.send('dlq', [{ value: 'd' }]);
    await until(() => sends.length === 2);
    sends.forEach((s) => s.finish());
    await Promise.all([a, b]);
    await client.close();
    expect(closed.sort()).toEqual(['dlq', 'events']);
  });
});

describe('retryDelayMs', () => {
  it('backs off from 200 ms, doubling, to at most 5 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(retryDelayMs)).toEqual([
      200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000,
    ]);
  });
});

describe('warnedRetryDelay', () => {
  it('gives the backoff and warns of each retry with the topic, the operation and the reason', () => {
    const lines: string[] = [];
    const delay = warnedRetryDelay('hookbase.events', (line) => lines.push(line));
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:19092');
    expect(delay({}, 'produce', 1, 8, refused)).toBe(200);
    expect(delay({}, 'metadata', 3, 8, 'broker gone')).toBe(800);
    expect(lines).toEqual([
      'producing to hookbase.events: produce failed (connect ECONNREFUSED 127.0.0.1:19092); retry 1 of 8 in 200 ms',
      'producing to hookbase.events: metadata failed (broker gone); retry 3 of 8 in 800 ms',
    ]);
  });
});

describe('rememberedKeyHash', () => {
  it('hashes each distinct key once and answers what the hash answered', () => {
    const hashed: string[] = [];
    const length = (key: Buffer) => key.length * 7;
    const remembered = rememberedKeyHash((key) => {
      hashed.push(key.toString());
      return length(key);
    });
    const keys = ['ep_1', 'ep_22', 'ep_1', 'ep_22', 'ep_333', 'ep_1'];
    expect(keys.map((key) => remembered(Buffer.from(key)))).toEqual([28, 35, 28, 35, 42, 28]);
    expect(hashed).toEqual(['ep_1', 'ep_22', 'ep_333']);
  });

  it('keeps keys apart that differ only in bytes beyond ASCII', () => {
    const remembered = rememberedKeyHash((key) => key[key.length - 1]);
    expect(remembered(Buffer.from([0x6b, 0xc3, 0xa9]))).toBe(0xa9);
    expect(remembered(Buffer.from([0x6b, 0xc3, 0xa8]))).toBe(0xa8);
  });

  it('starts over past its bound, still answering right', () => {
    let calls = 0;
    const remembered = rememberedKeyHash((key) => {
      calls++;
      return key[0];
    }, 2);
    for (const byte of [1, 2, 3, 1]) expect(remembered(Buffer.from([byte]))).toBe(byte);
    expect(calls).toBe(4); // 1 and 2 remembered, 3 started the memory over, so 1 again
  });
});
