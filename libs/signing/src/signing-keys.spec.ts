import { createHmac } from 'node:crypto';
import { SigningKeys } from './signing-keys';
import { generateSecret, parseSecret } from './standard-webhooks';

describe('SigningKeys', () => {
  it('gives a key that signs exactly as the secret bytes do', () => {
    const keys = new SigningKeys(parseSecret);
    const secret = generateSecret();
    const withKey = createHmac('sha256', keys.keyOf(secret)).update('m.1.{}').digest('base64');
    const withBytes = createHmac('sha256', parseSecret(secret)).update('m.1.{}').digest('base64');
    expect(withKey).toBe(withBytes);
  });

  it('parses each secret once while it is held', () => {
    const parse = jest.fn(parseSecret);
    const keys = new SigningKeys(parse);
    const secret = generateSecret();
    const first = keys.keyOf(secret);
    expect(keys.keyOf(secret)).toBe(first);
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('holds at most its capacity, dropping the secret used least recently', () => {
    const parse = jest.fn(parseSecret);
    const keys = new SigningKeys(parse, 2);
    const [a, b, c] = [generateSecret(), generateSecret(), generateSecret()];
    keys.keyOf(a);
    keys.keyOf(b);
    keys.keyOf(a); // a is now the most recent
    keys.keyOf(c); // drops b
    expect(keys.size).toBe(2);
    parse.mockClear();
    keys.keyOf(a);
    keys.keyOf(c);
    expect(parse).not.toHaveBeenCalled();
    keys.keyOf(b);
    expect(parse).toHaveBeenCalledTimes(1);
    expect(keys.size).toBe(2);
  });

  it('holds nothing for a secret that is not valid, and throws its error', () => {
    const keys = new SigningKeys(parseSecret);
    expect(() => keys.keyOf('whsec_not base64')).toThrow(
      expect.objectContaining({ code: 'INVALID_SECRET' }),
    );
    expect(keys.size).toBe(0);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new SigningKeys(parseSecret, 0)).toThrow(RangeError);
    expect(() => new SigningKeys(parseSecret, 1.5)).toThrow(RangeError);
  });
});
