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

  it('encodes the millisecond in its first ten characters, in Crockford base32', () => {
    expect(newId('evt', 0).slice(4, 14)).toBe('0000000000');
    expect(newId('evt', 31).slice(4, 14)).toBe('000000000z');
    expect(newId('evt', 32).slice(4, 14)).toBe('0000000010');
    expect(newId('evt', 1_700_000_000_000).slice(4, 14)).toBe('01hf7yat00');
    // Asked again after another millisecond, the first one still encodes the same.
    expect(newId('evt', 0).slice(4, 14)).toBe('0000000000');
  });

  it('draws a new random part for every id of the same millisecond', () => {
    const ids = Array.from({ length: 1_000 }, () => newId('msg', 1_700_000_000_000));
    expect(new Set(ids.map((id) => id.slice(14))).size).toBe(1_000);
    expect(ids.every((id) => /^msg_01hf7yat00[0-9a-hjkmnp-tv-z]{16}$/.test(id))).toBe(true);
  });
});
