import { payloadBody } from './destination.adapter';

describe('payloadBody', () => {
  it('is the payload as JSON.stringify writes it', () => {
    const payload = { zeta: 'z', alpha: [1, { b: null }], text: 'é "quoted"' };
    expect(payloadBody(payload)).toBe(JSON.stringify(payload));
  });

  it('writes a payload object out once, for every message that shares it', () => {
    const shared = { id: 1, note: 'x'.repeat(100) };
    const written = jest.spyOn(JSON, 'stringify');
    try {
      const bodies = Array.from({ length: 5 }, () => payloadBody(shared));
      expect(new Set(bodies)).toEqual(new Set([JSON.stringify(shared)]));
      // Five calls above and the one in the expectation: the payload was written once in all.
      expect(written.mock.calls.filter(([value]) => value === shared)).toHaveLength(2);
      // An equal payload in another object is written on its own.
      payloadBody({ ...shared });
      expect(written).toHaveBeenCalledTimes(3);
    } finally {
      written.mockRestore();
    }
  });
});
