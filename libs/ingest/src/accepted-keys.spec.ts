import { AcceptedKeys } from './accepted-keys';

const accepted = (eventId: string) => ({
  eventId,
  eventType: 'order.paid',
  acceptedAt: '2026-01-01T00:00:00.000Z',
  fingerprint: `fp_${eventId}`,
});

describe('AcceptedKeys', () => {
  it('recalls a key of an organization as it was accepted, and no other', () => {
    const keys = new AcceptedKeys();
    keys.remember('org_a', 'k1', accepted('evt_1'), 0);
    expect(keys.recall('org_a', 'k1', 10)).toEqual(accepted('evt_1'));
    expect(keys.recall('org_b', 'k1', 10)).toBeUndefined();
    expect(keys.recall('org_a', 'k2', 10)).toBeUndefined();
  });

  it('keeps organizations and keys apart whatever they contain', () => {
    const keys = new AcceptedKeys();
    keys.remember('org_a', 'b:c', accepted('evt_1'), 0);
    expect(keys.recall('org_a:b', 'c', 0)).toBeUndefined();
  });

  it('forgets an entry older than its time to live', () => {
    const keys = new AcceptedKeys(10, 1_000);
    keys.remember('org_a', 'k1', accepted('evt_1'), 0);
    expect(keys.recall('org_a', 'k1', 1_000)).toBeDefined();
    expect(keys.recall('org_a', 'k1', 1_001)).toBeUndefined();
  });

  it('drops the oldest entry beyond its bound, and a remembered key again counts as new', () => {
    const keys = new AcceptedKeys(2);
    keys.remember('org_a', 'k1', accepted('evt_1'), 0);
    keys.remember('org_a', 'k2', accepted('evt_2'), 0);
    keys.remember('org_a', 'k1', accepted('evt_1'), 1);
    keys.remember('org_a', 'k3', accepted('evt_3'), 2);
    expect(keys.size).toBe(2);
    expect(keys.recall('org_a', 'k2', 2)).toBeUndefined();
    expect(keys.recall('org_a', 'k1', 2)?.eventId).toBe('evt_1');
    expect(keys.recall('org_a', 'k3', 2)?.eventId).toBe('evt_3');
  });
});
