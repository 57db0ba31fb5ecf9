import { partitionLag } from './consumer-lag';

describe('partitionLag', () => {
  it('is log-end minus committed', () => {
    expect(partitionLag({ high: '120', low: '0', committed: '100' })).toBe(20);
  });

  it('is 0 when the group committed everything', () => {
    expect(partitionLag({ high: '120', low: '0', committed: '120' })).toBe(0);
  });

  it('counts from the oldest kept record when the group never committed', () => {
    expect(partitionLag({ high: '50', low: '10', committed: '-1' })).toBe(40);
    expect(partitionLag({ high: '0', low: '0', committed: '-1' })).toBe(0);
  });

  it('counts from the oldest kept record when retention deleted what the group had not read', () => {
    expect(partitionLag({ high: '50', low: '30', committed: '5' })).toBe(20);
  });

  it('is never negative (a committed offset ahead of a log-end read just before)', () => {
    expect(partitionLag({ high: '10', low: '0', committed: '12' })).toBe(0);
  });

  it('reads offsets beyond 2^53 exactly', () => {
    expect(
      partitionLag({ high: '9007199254740999', low: '0', committed: '9007199254740990' }),
    ).toBe(9);
  });
});
