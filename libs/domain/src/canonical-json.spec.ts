import { canonicalJson, eventFingerprint } from './canonical-json';

describe('canonicalJson', () => {
  it('ignores key order at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
  });

  it('keeps array order and distinguishes types', () => {
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
  });

  it('drops undefined members as JSON.stringify does', () => {
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}');
  });
});

describe('eventFingerprint', () => {
  it('is equal for the same type and payload in any key order', () => {
    expect(eventFingerprint('order.created', { id: 1, total: 5 })).toBe(
      eventFingerprint('order.created', { total: 5, id: 1 }),
    );
  });

  it('differs when the type or the payload differs', () => {
    const base = eventFingerprint('order.created', { id: 1 });
    expect(eventFingerprint('order.updated', { id: 1 })).not.toBe(base);
    expect(eventFingerprint('order.created', { id: 2 })).not.toBe(base);
  });
});
