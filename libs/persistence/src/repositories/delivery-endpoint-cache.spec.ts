import {
  deepFreeze,
  DeliveryEndpointCache,
  KeptEndpoint,
  secretsSigningAt,
} from './delivery-endpoint-cache';

const kept = (version: string, readAt = 1_000, secrets: KeptEndpoint['secrets'] = []) => ({
  version,
  readAt,
  columns: { id: 'ep_1' },
  secrets,
});

describe('DeliveryEndpointCache', () => {
  it('gives an endpoint back only at the version it was read at', () => {
    const cache = new DeliveryEndpointCache();
    cache.put('ep_1', kept('7'));
    expect(cache.get('ep_1', '7', 2_000)?.version).toBe('7');
    expect(cache.get('ep_1', '8', 2_000)).toBeUndefined();
    expect(cache.get('ep_2', '7', 2_000)).toBeUndefined();
    cache.put('ep_1', kept('8'));
    expect(cache.get('ep_1', '7', 2_000)).toBeUndefined();
    expect(cache.get('ep_1', '8', 2_000)?.version).toBe('8');
  });

  it('gives nothing for a time before the read: secrets retired then were not read', () => {
    const cache = new DeliveryEndpointCache();
    cache.put('ep_1', kept('7', 5_000));
    expect(cache.get('ep_1', '7', 4_999)).toBeUndefined();
    expect(cache.get('ep_1', '7', 5_000)).toBeDefined();
  });

  it('keeps at most its capacity, dropping the endpoint kept longest ago', () => {
    const cache = new DeliveryEndpointCache(2);
    cache.put('ep_1', kept('1'));
    cache.put('ep_2', kept('1'));
    cache.put('ep_1', kept('2')); // kept again: now the newest
    cache.put('ep_3', kept('1'));
    expect(cache.size).toBe(2);
    expect(cache.get('ep_2', '1', 2_000)).toBeUndefined();
    expect(cache.get('ep_1', '2', 2_000)).toBeDefined();
    expect(cache.get('ep_3', '1', 2_000)).toBeDefined();
  });
});

describe('secretsSigningAt', () => {
  it('gives the secrets not retired at that time, in their order', () => {
    const endpoint = kept('1', 0, [
      { secret: 'new', expiresAt: null },
      { secret: 'overlap', expiresAt: 10_000 },
      { secret: 'old', expiresAt: 5_000 },
    ]);
    expect(secretsSigningAt(endpoint, 4_999)).toEqual(['new', 'overlap', 'old']);
    expect(secretsSigningAt(endpoint, 5_000)).toEqual(['new', 'overlap']);
    expect(secretsSigningAt(endpoint, 10_000)).toEqual(['new']);
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
