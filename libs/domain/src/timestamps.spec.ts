import { isoTimestamp } from './timestamps';

describe('isoTimestamp', () => {
  it.each([
    0,
    1_764_912_600_123,
    1_764_912_600_999,
    1_764_912_601_000,
    Date.UTC(2028, 1, 29, 23, 59, 59, 999),
    -1,
  ])('writes %d as Date writes it', (ms) => {
    expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
  });

  it('answers each millisecond of a sequence that repeats, moves on and goes back', () => {
    const sequence = [1_000, 1_000, 1_001, 1_001, 999, 1_000, 86_400_000, 1_000];
    expect(sequence.map(isoTimestamp)).toEqual(sequence.map((ms) => new Date(ms).toISOString()));
  });

  it('refuses a time Date cannot write, as Date does', () => {
    expect(() => isoTimestamp(Number.NaN)).toThrow(RangeError);
    expect(() => isoTimestamp(8.64e15 + 1)).toThrow(RangeError);
  });
});
