import { secretsSigningAt } from './kept-endpoint';

describe('secretsSigningAt', () => {
  it('gives the secrets not retired at that time, in their order', () => {
    const endpoint = {
      readAt: 0,
      columns: { id: 'ep_1' },
      secrets: [
        { secret: 'new', expiresAt: null },
        { secret: 'overlap', expiresAt: 10_000 },
        { secret: 'old', expiresAt: 5_000 },
      ],
    };
    expect(secretsSigningAt(endpoint, 4_999)).toEqual(['new', 'overlap', 'old']);
    expect(secretsSigningAt(endpoint, 5_000)).toEqual(['new', 'overlap']);
    expect(secretsSigningAt(endpoint, 10_000)).toEqual(['new']);
  });
});
