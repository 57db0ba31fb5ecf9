import { deepFreeze, KeptByVersion } from './kept-by-version';

describe('KeptByVersion', () => {
  it('gives a value back only at the version it was read at', () => {
    const kept = new KeptByVersion<string>(10);
    kept.put('ep_1', '7', 'seven');
    expect(kept.get('ep_1', '7')).toBe('seven');
    expect(kept.get('ep_1', '8')).toBeUndefined();
    expect(kept.get('ep_2', '7')).toBeUndefined();
    kept.put('ep_1', '8', 'eight');
    expect(kept.get('ep_1', '7')).toBeUndefined();
    expect(kept.get('ep_1', '8')).toBe('eight');
  });

  it('tells what it keeps for a key and at which version, for a reader that checks it later', () => {
    const kept = new KeptByVersion<string>(10);
    expect(kept.latest('ep_1')).toBeUndefined();
    kept.put('ep_1', '7', 'seven');
    expect(kept.latest('ep_1')).toEqual({ version: '7', value: 'seven' });
    kept.put('ep_1', '8', 'eight');
    expect(kept.latest('ep_1')).toEqual({ version: '8', value: 'eight' });
    kept.put('ep_1', '9', 'too heavy', 11);
    expect(kept.latest('ep_1')).toBeUndefined();
  });

  it('keeps at most its capacity by weight, dropping what was kept longest ago', () => {
    const kept = new KeptByVersion<string>(5);
    kept.put('a', '1', 'a', 2);
    kept.put('b', '1', 'b', 2);
    kept.put('a', '2', 'a again', 2); // kept again: now the newest
    kept.put('c', '1', 'c', 3);
    expect(kept.get('b', '1')).toBeUndefined();
    expect(kept.get('a', '2')).toBe('a again');
    expect(kept.get('c', '1')).toBe('c');
    expect(kept.size).toBe(5);
  });

  it('does not keep a value heavier than its capacity, nor the one it replaces', () => {
    const kept = new KeptByVersion<string>(5);
    kept.put('small', '1', 'small', 1);
    kept.put('huge', '1', 'huge', 1);
    kept.put('huge', '2', 'huge', 6);
    expect(kept.get('huge', '2')).toBeUndefined();
    expect(kept.get('huge', '1')).toBeUndefined();
    expect(kept.get('small', '1')).toBe('small');
    expect(kept.size).toBe(1);
  });
});

describe('deepFreeze', () => {
  it('freezes a value and everything in it', () => {
    const value = deepFreeze({ retry: { delaysMs: [0, 1_000] }, eventTypes: ['a'], url: 'x' });
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.retry)).toBe(true);
    expect(Object.isFrozen(value.retry.delaysMs)).toBe(true);
    expect(() => (value.eventTypes as string[]).push('b')).toThrow(TypeError);
  });
});
