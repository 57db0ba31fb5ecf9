import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  generateSecret,
  isValidSecret,
  parseSecret,
  SECRET_BYTES,
  signPayload,
  webhookHeaders,
} from './standard-webhooks';

// The test vector of the Standard Webhooks project (its reference libraries' "sign function
// works" test), copied here as data.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestampSeconds: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const nowSeconds = () => Math.floor(Date.now() / 1000);
const secretOf = (bytes: number, fill = 7) =>
  `whsec_${Buffer.alloc(bytes, fill).toString('base64')}`;
const SIGNATURE = /^v1,[A-Za-z0-9+/]{43}=$/; // 32 bytes of HMAC-SHA256

describe('signPayload', () => {
  it('reproduces the Standard Webhooks test vector', () => {
    expect(
      signPayload({
        messageId: VECTOR.messageId,
        timestampSeconds: VECTOR.timestampSeconds,
        body: VECTOR.body,
        secrets: [VECTOR.secret],
      }),
    ).toBe(VECTOR.signature);
  });

  it('signs `${id}.${timestamp}.${body}` with the decoded key, body bytes as UTF-8', () => {
    const secret = secretOf(32);
    const body = '{"name":"Zoë","emoji":"✓"}';
    const expected = createHmac('sha256', Buffer.alloc(32, 7))
      .update(Buffer.from(`msg_1.1700000000.${body}`, 'utf8'))
      .digest('base64');
    expect(
      signPayload({ messageId: 'msg_1', timestampSeconds: 1700000000, body, secrets: [secret] }),
    ).toBe(`v1,${expected}`);
  });

  it('signs exactly as the standardwebhooks package does', () => {
    for (let i = 0; i < 20; i++) {
      const secret = generateSecret();
      const body = JSON.stringify({ i, at: new Date(1_700_000_000_000 + i).toISOString() });
      const ours = signPayload({
        messageId: `msg_${i}`,
        timestampSeconds: 1_700_000_000 + i,
        body,
        secrets: [secret],
      });
      expect(ours).toMatch(SIGNATURE);
      expect(ours).toBe(
        new Webhook(secret).sign(`msg_${i}`, new Date((1_700_000_000 + i) * 1000), body),
      );
    }
  });

  it('gives one space-separated signature per secret, in order', () => {
    const [a, b] = [secretOf(32, 1), secretOf(32, 2)];
    const input = { messageId: 'msg_1', timestampSeconds: 1, body: '{}' };
    const both = signPayload({ ...input, secrets: [a, b] });
    expect(both).toBe(
      `${signPayload({ ...input, secrets: [a] })} ${signPayload({ ...input, secrets: [b] })}`,
    );
    expect(both.split(' ')).toHaveLength(2);
  });

  it('needs at least one secret', () => {
    expect(() =>
      signPayload({ messageId: 'msg_1', timestampSeconds: 1, body: '{}', secrets: [] }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_SECRET' }));
  });

  it('refuses to sign with an invalid secret, even beside a valid one', () => {
    expect(() =>
      signPayload({
        messageId: 'msg_1',
        timestampSeconds: 1,
        body: '{}',
        secrets: [generateSecret(), 'whsec_short'],
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_SECRET' }));
  });

  it.each([
    ['', 1],
    ['msg.1', 1],
    ['msg_1', 1.5],
    ['msg_1', -1],
    ['msg_1', Number.NaN],
  ])('refuses id %p with timestamp %p, which would sign ambiguous content', (messageId, ts) => {
    expect(() =>
      signPayload({ messageId, timestampSeconds: ts, body: '{}', secrets: [generateSecret()] }),
    ).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});

describe('webhookHeaders', () => {
  it('gives the three Standard Webhooks headers', () => {
    expect(
      webhookHeaders({
        messageId: VECTOR.messageId,
        timestampSeconds: VECTOR.timestampSeconds,
        body: VECTOR.body,
        secrets: [VECTOR.secret],
      }),
    ).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': VECTOR.signature,
    });
  });

  it('is verified by the standardwebhooks package', () => {
    const secret = generateSecret();
    const body = JSON.stringify({ order: 42, note: 'ünïcode ✓' });
    const headers = webhookHeaders({
      messageId: 'msg_1',
      timestampSeconds: nowSeconds(),
      body,
      secrets: [secret],
    });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('verifies with each secret alone during a rotation, and not with a third', () => {
    const [oldSecret, newSecret] = [generateSecret(), generateSecret(64)];
    const body = '{"a":1}';
    const headers = webhookHeaders({
      messageId: 'msg_2',
      timestampSeconds: nowSeconds(),
      body,
      secrets: [newSecret, oldSecret],
    });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual({ a: 1 });
    expect(new Webhook(newSecret).verify(body, headers)).toEqual({ a: 1 });
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow(
      'No matching signature found',
    );
  });

  it('does not verify once the body, id or timestamp is changed', () => {
    const secret = generateSecret();
    const body = '{"amount":100}';
    const headers = webhookHeaders({
      messageId: 'msg_3',
      timestampSeconds: nowSeconds(),
      body,
      secrets: [secret],
    });
    const webhook = new Webhook(secret);
    expect(webhook.verify(body, headers)).toEqual({ amount: 100 });
    expect(() => webhook.verify('{"amount":1000}', headers)).toThrow('No matching signature found');
    expect(() => webhook.verify(`${body} `, headers)).toThrow('No matching signature found');
    expect(() => webhook.verify(body, { ...headers, 'webhook-id': 'msg_4' })).toThrow(
      'No matching signature found',
    );
    const earlier = String(Number(headers['webhook-timestamp']) - 1);
    expect(() => webhook.verify(body, { ...headers, 'webhook-timestamp': earlier })).toThrow(
      'No matching signature found',
    );
  });
});

describe('secrets', () => {
  it('generates secrets of 32 bytes by default, or the size asked for', () => {
    expect(generateSecret()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(parseSecret(generateSecret())).toHaveLength(32);
    expect(parseSecret(generateSecret(SECRET_BYTES.min))).toHaveLength(24);
    expect(parseSecret(generateSecret(SECRET_BYTES.max))).toHaveLength(64);
  });

  it('generates a different secret every time', () => {
    const secrets = new Set(Array.from({ length: 100 }, () => generateSecret()));
    expect(secrets.size).toBe(100);
  });

  it.each([0, 16, 23, 65, 32.5])('will not generate a secret of %p bytes', (bytes) => {
    expect(() => generateSecret(bytes)).toThrow(
      expect.objectContaining({ code: 'INVALID_SECRET' }),
    );
  });

  it('reads the key bytes of a secret', () => {
    expect(parseSecret(VECTOR.secret)).toEqual(
      Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'),
    );
    expect(parseSecret(secretOf(40, 9))).toEqual(Buffer.alloc(40, 9));
  });

  it.each([
    [secretOf(24), '24 bytes'],
    [secretOf(25), '25 bytes (one = of padding)'],
    [secretOf(26), '26 bytes (two = of padding)'],
    [secretOf(64), '64 bytes'],
    [VECTOR.secret, 'the test vector'],
  ])('accepts %s (%s)', (secret) => {
    expect(isValidSecret(secret)).toBe(true);
  });

  it.each([
    ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'no prefix'],
    ['WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'upper-case prefix'],
    ['whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'asymmetric prefix'],
    [' whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'leading space'],
    ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw ', 'trailing space'],
    ['whsec_MfKQ9r8GKYqrTwjU PD8ILPZIo2LaLaSw', 'space inside'],
    ['whsec_not base64!!', 'not base64'],
    ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS*', 'a character outside base64'],
    ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-_', 'URL-safe alphabet'],
    [secretOf(25).replace(/=+$/, ''), 'padding left out'],
    [`${secretOf(24)}=`, 'padding added'],
    [secretOf(23), 'too short: 23 bytes'],
    [secretOf(65), 'too long: 65 bytes'],
    [secretOf(128), 'too long: 128 bytes'],
    ['whsec_', 'empty'],
    ['', 'nothing'],
  ])('refuses %p (%s)', (secret) => {
    expect(isValidSecret(secret)).toBe(false);
    expect(() => parseSecret(secret)).toThrow(expect.objectContaining({ code: 'INVALID_SECRET' }));
  });

  it('never quotes the secret in its error', () => {
    const secret = `${secretOf(23)}`;
    expect(() => parseSecret(secret)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(secret.slice(6)) }),
    );
  });
});
