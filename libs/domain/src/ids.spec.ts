import { newId } from './ids';

describe('ids', () => {
  it('carries its prefix', () => {
    expect(newId('evt')).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(newId('msg')).toMatch(/^msg_[0-9a-z]{26}$/);
  });

  it('sorts by creation time', () => {
    const earlier = newId('msg', 1_700_000_000_000);
    const later = newId('msg', 1_700_000_000_001);
    expect(earlier < later).toBe(true);
  });

  it('is unique across many draws in the same millisecond', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('msg', 1)));
    expect(ids.size).toBe(10_000);
  });
});
