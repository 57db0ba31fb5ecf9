import { declaredBodyBytes, InFlightBytes } from './in-flight-bytes';

describe('InFlightBytes', () => {
  it('takes requests while their bodies stay within the budget, and again once given back', () => {
    const bytes = new InFlightBytes(100);
    expect(bytes.take(60)).toBe(true);
    expect(bytes.take(40)).toBe(true);
    expect(bytes.heldBytes).toBe(100);
    // Full: even a request of one byte waits for an answer.
    expect(bytes.take(1)).toBe(false);
    expect(bytes.heldBytes).toBe(100);
    bytes.give(40);
    expect(bytes.take(41)).toBe(false);
    expect(bytes.take(40)).toBe(true);
    bytes.give(60);
    bytes.give(40);
    expect(bytes.heldBytes).toBe(0);
  });

  it('takes a body larger than the budget when nothing else is in flight, and nothing beside it', () => {
    const bytes = new InFlightBytes(100);
    expect(bytes.take(250)).toBe(true);
    expect(bytes.take(0)).toBe(true);
    expect(bytes.take(1)).toBe(false);
    bytes.give(250);
    expect(bytes.take(1)).toBe(true);
  });

  it('refuses bookkeeping that would not add up', () => {
    expect(() => new InFlightBytes(0)).toThrow(/positive/);
    expect(() => new InFlightBytes(1.5)).toThrow(/positive/);
    const bytes = new InFlightBytes(10);
    expect(() => bytes.take(-1)).toThrow(/whole number/);
    expect(() => bytes.take(Number.NaN)).toThrow(/whole number/);
    bytes.take(5);
    expect(() => bytes.give(6)).toThrow(/5 are held/);
  });

  it('never holds more than the budget beside one request, in any order of takes and gives', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const bytes = new InFlightBytes(1_000);
    const held: number[] = [];
    for (let step = 0; step < 5_000; step++) {
      if (held.length > 0 && random() < 0.5) {
        bytes.give(held.splice(Math.floor(random() * held.length), 1)[0]);
      } else {
        const size = Math.floor(random() * 1_500);
        const before = bytes.heldBytes;
        const taken = bytes.take(size);
        expect(taken).toBe(size === 0 || before === 0 || before + size <= 1_000);
        if (taken) held.push(size);
      }
      const sum = held.reduce((a, b) => a + b, 0);
      expect(bytes.heldBytes).toBe(sum);
      // Within the budget, or a single request alone.
      expect(sum <= 1_000 || held.filter((size) => size > 0).length === 1).toBe(true);
    }
  });
});

describe('declaredBodyBytes', () => {
  const LIMIT = 1_000;
  it('counts a request by its Content-Length, at most the body limit', () => {
    expect(declaredBodyBytes({ 'content-length': '120' }, LIMIT)).toBe(120);
    expect(declaredBodyBytes({ 'content-length': '0' }, LIMIT)).toBe(0);
    expect(declaredBodyBytes({ 'content-length': '5000' }, LIMIT)).toBe(LIMIT);
  });

  it('counts the body limit for a body of unknown length, or a length that is not a number', () => {
    expect(declaredBodyBytes({ 'transfer-encoding': 'chunked' }, LIMIT)).toBe(LIMIT);
    expect(declaredBodyBytes({ 'content-length': 'abc' }, LIMIT)).toBe(LIMIT);
    expect(declaredBodyBytes({ 'content-length': '-3' }, LIMIT)).toBe(LIMIT);
  });

  it('counts nothing for a request without a body', () => {
    expect(declaredBodyBytes({}, LIMIT)).toBe(0);
  });
});
