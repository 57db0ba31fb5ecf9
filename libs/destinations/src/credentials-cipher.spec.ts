import {
  CredentialsCipher,
  CredentialsCipherError,
  generateCredentialsKey,
  parseCredentialsKey,
} from './credentials-cipher';

const credentials = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  sessionToken: 'token',
};

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CredentialsCipherError);
    const message = (error as Error).message;
    // Never the secret, never the key.
    expect(message).not.toContain(credentials.secretAccessKey);
    return (error as CredentialsCipherError).code;
  }
  return undefined;
}

describe('CredentialsCipher', () => {
  const key = generateCredentialsKey();
  const cipher = new CredentialsCipher(key);

  it('round-trips a credentials object through a v1 envelope', () => {
    const envelope = cipher.encrypt(credentials, 'ep_1');
    expect(envelope).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(envelope).not.toContain(credentials.secretAccessKey);
    expect(cipher.decrypt(envelope, 'ep_1')).toEqual(credentials);
  });

  it('uses a fresh IV every time', () => {
    const first = cipher.encrypt(credentials);
    const second = cipher.encrypt(credentials);
    expect(first).not.toBe(second);
    expect(first.split(':')[1]).not.toBe(second.split(':')[1]);
    expect(cipher.decrypt(first)).toEqual(cipher.decrypt(second));
  });

  it('detects any change to the IV, tag or ciphertext', () => {
    const envelope = cipher.encrypt(credentials, 'ep_1');
    const parts = envelope.split(':');
    for (const index of [1, 2, 3]) {
      const bytes = Buffer.from(parts[index], 'base64');
      bytes[bytes.length - 1] ^= 0x01;
      const tampered = [...parts];
      tampered[index] = bytes.toString('base64');
      expect(codeOf(() => cipher.decrypt(tampered.join(':'), 'ep_1'))).toBe('DECRYPT_FAILED');
    }
  });

  it('refuses another key', () => {
    const envelope = cipher.encrypt(credentials);
    const other = new CredentialsCipher(generateCredentialsKey());
    expect(codeOf(() => other.decrypt(envelope))).toBe('DECRYPT_FAILED');
  });

  it("refuses another endpoint's ciphertext (the context is authenticated)", () => {
    const envelope = cipher.encrypt(credentials, 'ep_1');
    expect(codeOf(() => cipher.decrypt(envelope, 'ep_2'))).toBe('DECRYPT_FAILED');
  });

  it('reads with a previous key during a key rotation', () => {
    const old = cipher.encrypt(credentials);
    const rotated = new CredentialsCipher(generateCredentialsKey(), { previousKeys: [key] });
    expect(rotated.decrypt(old)).toEqual(credentials);
    const fresh = rotated.encrypt(credentials);
    expect(codeOf(() => cipher.decrypt(fresh))).toBe('DECRYPT_FAILED');
  });

  it.each([
    ['not an envelope', 'hello'],
    ['too many parts', 'v1:a:b:c:d'],
    ['bad base64', 'v1:***:***:***'],
    [
      'a short IV',
      `v1:${Buffer.alloc(4).toString('base64')}:${Buffer.alloc(16).toString('base64')}:AAAA`,
    ],
  ])('refuses a malformed envelope: %s', (_label, envelope) => {
    expect(codeOf(() => cipher.decrypt(envelope))).toBe('MALFORMED_ENVELOPE');
  });

  it('refuses an envelope of an unknown version', () => {
    const envelope = cipher.encrypt(credentials).replace(/^v1:/, 'v9:');
    expect(codeOf(() => cipher.decrypt(envelope))).toBe('UNSUPPORTED_VERSION');
  });

  it.each([
    ['empty', ''],
    ['16 bytes', Buffer.alloc(16).toString('base64')],
    ['33 bytes', Buffer.alloc(33).toString('base64')],
    ['not base64', '!'.repeat(44)],
  ])('refuses a key that is %s', (_label, text) => {
    expect(codeOf(() => parseCredentialsKey(text))).toBe('INVALID_KEY');
    expect(codeOf(() => new CredentialsCipher(text))).toBe('INVALID_KEY');
  });

  it('accepts a raw 32-byte key and refuses another length', () => {
    const raw = Buffer.from(key, 'base64');
    expect(new CredentialsCipher(raw).decrypt(cipher.encrypt(credentials))).toEqual(credentials);
    expect(codeOf(() => new CredentialsCipher(Buffer.alloc(31)))).toBe('INVALID_KEY');
  });

  describe('what it opened', () => {
    afterEach(() => jest.restoreAllMocks());
    const opens = () =>
      jest.spyOn(
        CredentialsCipher.prototype as unknown as { openEnvelope: () => string },
        'openEnvelope',
      );

    it('opens an envelope once per context and answers the same text after', () => {
      const cipher = new CredentialsCipher(Buffer.alloc(32, 9));
      const mine = cipher.sealText('whsec_mine', 'ep_a');
      const theirs = cipher.sealText('whsec_theirs', 'ep_b');
      const spy = opens();
      for (let i = 0; i < 3; i++) expect(cipher.openText(mine, 'ep_a')).toBe('whsec_mine');
      expect(spy).toHaveBeenCalledTimes(1);
      expect(cipher.openText(theirs, 'ep_b')).toBe('whsec_theirs');
      expect(spy).toHaveBeenCalledTimes(2);
    });

    it('keeps nothing that did not open: another context still fails every time', () => {
      const cipher = new CredentialsCipher(Buffer.alloc(32, 9));
      const sealed = cipher.sealText('whsec_mine', 'ep_a');
      expect(cipher.openText(sealed, 'ep_a')).toBe('whsec_mine');
      for (let i = 0; i < 2; i++) {
        expect(() => cipher.openText(sealed, 'ep_b')).toThrow(CredentialsCipherError);
      }
    });

    it('keeps at most keepOpened texts, letting the oldest go', () => {
      const cipher = new CredentialsCipher(Buffer.alloc(32, 9), { keepOpened: 2 });
      const sealed = ['a', 'b', 'c'].map((name) => cipher.sealText(`text ${name}`, name));
      const spy = opens();
      sealed.forEach((envelope, i) => cipher.openText(envelope, ['a', 'b', 'c'][i]));
      expect(spy).toHaveBeenCalledTimes(3);
      cipher.openText(sealed[2], 'c');
      cipher.openText(sealed[1], 'b');
      expect(spy).toHaveBeenCalledTimes(3);
      expect(cipher.openText(sealed[0], 'a')).toBe('text a');
      expect(spy).toHaveBeenCalledTimes(4);
    });

    it('decrypts credentials it opened before into a new object each time', () => {
      const cipher = new CredentialsCipher(Buffer.alloc(32, 9));
      const envelope = cipher.encrypt({ accessKeyId: 'AKIA' }, 'org_a');
      const first = cipher.decrypt(envelope, 'org_a');
      first.accessKeyId = 'changed';
      expect(cipher.decrypt(envelope, 'org_a')).toEqual({ accessKeyId: 'AKIA' });
    });
  });
});
