import { isId, newId } from './ids';

describe('ids', () => {
  it('carries its prefix and is recognised as that kind only', () => {
    const id = newId('evt');
    expect(id).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(isId('evt', id)).toBe(true);
    expect(isId('msg', id)).toBe(false);
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

  it('rejects values that are not ids', () => {
    for (const value of [
      undefined,
      42,
      '',
      'evt_',
      'evt_UPPERCASE00000000000000000',
      'evt_short',
    ]) {
      expect(isId('evt', value)).toBe(false);
    }
  });
});
