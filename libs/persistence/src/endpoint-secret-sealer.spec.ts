import { EndpointSecretSealer, isPlaintextSecret } from './endpoint-secret-sealer';

const KEY = Buffer.alloc(32, 1).toString('base64');
const OLD = Buffer.alloc(32, 2).toString('base64');
const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;

describe('EndpointSecretSealer', () => {
  it('seals a secret into an envelope that never contains it, and opens it again', () => {
    const sealer = new EndpointSecretSealer({ key: KEY });
    const sealed = sealer.seal(SECRET, 'ep_a');
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain(SECRET.slice('whsec_'.length));
    expect(isPlaintextSecret(sealed)).toBe(false);
    expect(sealer.open(sealed, 'ep_a')).toBe(SECRET);
    // A fresh IV each time: the same secret never seals to the same text.
    expect(sealer.seal(SECRET, 'ep_a')).not.toBe(sealed);
  });

  it("binds a sealed secret to its endpoint: copied to another endpoint's row, it does not open", () => {
    const sealer = new EndpointSecretSealer({ key: KEY });
    expect(() => sealer.open(sealer.seal(SECRET, 'ep_a'), 'ep_b')).toThrow(/cannot be decrypted/);
  });

  it('opens secrets sealed with a previous key, and refuses those of an unknown key', () => {
    const sealedWithOld = new EndpointSecretSealer({ key: OLD }).seal(SECRET, 'ep_a');
    expect(
      new EndpointSecretSealer({ key: KEY, previousKeys: [OLD] }).open(sealedWithOld, 'ep_a'),
    ).toBe(SECRET);
    expect(() => new EndpointSecretSealer({ key: KEY }).open(sealedWithOld, 'ep_a')).toThrow();
  });

  it('reads a secret stored in plain text as it is, with or without a key', () => {
    expect(new EndpointSecretSealer({ key: KEY }).open(SECRET, 'ep_a')).toBe(SECRET);
    expect(new EndpointSecretSealer({ key: undefined }).open(SECRET, 'ep_a')).toBe(SECRET);
  });

  it('without a key stores secrets as they are, and says a sealed one needs the key', () => {
    const sealer = new EndpointSecretSealer({ key: undefined });
    expect(sealer.seals).toBe(false);
    expect(sealer.seal(SECRET, 'ep_a')).toBe(SECRET);
    const sealed = new EndpointSecretSealer({ key: KEY }).seal(SECRET, 'ep_a');
    expect(() => sealer.open(sealed, 'ep_a')).toThrow(/HOOKBASE_CREDENTIALS_KEY is not configured/);
  });

  it("still refuses an envelope it opened for one endpoint when it is another's", () => {
    const sealer = new EndpointSecretSealer({ key: KEY });
    const sealed = sealer.seal(SECRET, 'ep_a');
    expect(sealer.open(sealed, 'ep_a')).toBe(SECRET);
    expect(sealer.open(sealed, 'ep_a')).toBe(SECRET);
    expect(() => sealer.open(sealed, 'ep_b')).toThrow(/cannot be decrypted/);
    expect(() => sealer.open(sealed, 'ep_b')).toThrow(/cannot be decrypted/);
  });
});
