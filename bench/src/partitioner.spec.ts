import { murmur2, partitionFor, unitFraction } from './partitioner';

// kafkajs's own implementation (64-bit Long arithmetic), the one Hookbase's producer runs.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const kafkajsModule = require('kafkajs/src/producer/partitioners/default/murmur2');
const kafkajsMurmur2: (key: string | Buffer) => number = kafkajsModule;

function randomKey(length: number): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz_-';
  let key = '';
  for (let i = 0; i < length; i++) key += alphabet[Math.floor(Math.random() * alphabet.length)];
  return key;
}

describe('murmur2', () => {
  it('matches kafkajs for keys of every length remainder, endpoint ids included', () => {
    const keys = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      'abcde',
      'ep_01jabcdefghjkmnpqrstvwxyz',
      '✓ ünïcode',
    ];
    for (let i = 0; i < 2000; i++) keys.push(randomKey(1 + (i % 40)));
    for (const key of keys) expect([key, murmur2(key)]).toEqual([key, kafkajsMurmur2(key)]);
  });

  it('matches the Java client on known vectors', () => {
    // From Kafka's UtilsTest.testMurmur2 (the same values kafkajs is tested against).
    const cases: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [key, expected] of cases) expect(murmur2(key)).toBe(expected);
  });
});

describe('partitionFor', () => {
  it('is the positive hash modulo the partition count', () => {
    for (let i = 0; i < 500; i++) {
      const key = `ep_${randomKey(26)}`;
      const expected = (kafkajsMurmur2(key) & 0x7fffffff) % 12;
      expect(partitionFor(key, 12)).toBe(expected);
    }
  });

  it('spreads ids over every partition', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) seen.add(partitionFor(`ep_${randomKey(26)}`, 12));
    expect(seen.size).toBe(12);
  });

  it('refuses a partition count that is not a positive integer', () => {
    expect(() => partitionFor('x', 0)).toThrow(/positive integer/);
    expect(() => partitionFor('x', 1.5)).toThrow(/positive integer/);
  });
});

describe('unitFraction', () => {
  it('is stable, in [0, 1), and roughly uniform', () => {
    expect(unitFraction('msg_1')).toBe(unitFraction('msg_1'));
    let below = 0;
    for (let i = 0; i < 20_000; i++) {
      const value = unitFraction(`msg_${i}`);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      if (value < 0.1) below++;
    }
    expect(below / 20_000).toBeGreaterThan(0.09);
    expect(below / 20_000).toBeLessThan(0.11);
  });
});
