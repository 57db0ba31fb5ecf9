import { Webhook } from 'standardwebhooks';
import { DomainError } from '@hookbase/domain';
import {
  generateSecret,
  isValidSecret,
  parseSecret,
  signPayload,
  webhookHeaders,
} from './standard-webhooks';

// The example published with the Standard Webhooks specification.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestampSeconds: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const now = () => Math.floor(Date.now() / 1000);

describe('signPayload', () => {
  it('reproduces the specification’s test vector', () => {
    expect(
      signPayload({
        messageId: VECTOR.messageId,
        timestampSeconds: VECTOR.timestampSeconds,
        body: VECTOR.body,
        secrets: [VECTOR.secret],
      }),
    ).toBe(VECTOR.signature);
  });

  it('is verified by the standardwebhooks package', () => {
    const secret = generateSecret();
    const body = JSON.stringify({ order: 42, note: 'ünïcode ✓' });
    const headers = webhookHeaders({
      messageId: 'msg_1',
      timestampSeconds: now(),
      body,
      secrets: [secret],
    });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('signs with every secret during a rotation, each verifying on its own', () => {
    const [oldSecret, newSecret] = [generateSecret(), generateSecret()];
    const body = '{"a":1}';
    const headers = webhookHeaders({
      messageId: 'msg_2',
      timestampSeconds: now(),
      body,
      secrets: [newSecret, oldSecret],
    });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual({ a: 1 });
    expect(new Webhook(newSecret).verify(body, headers)).toEqual({ a: 1 });
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
  });

  it('does not verify a tampered body, id or timestamp', () => {
    const secret = generateSecret();
    const headers = webhookHeaders({
      messageId: 'msg_3',
      timestampSeconds: now(),
      body: '{"a":1}',
      secrets: [secret],
    });
    const webhook = new Webhook(secret);
    expect(() => webhook.verify('{"a":2}', headers)).toThrow();
    expect(() => webhook.verify('{"a":1}', { ...headers, 'webhook-id': 'msg_4' })).toThrow();
    expect(() =>
      webhook.verify('{"a":1}', { ...headers, 'webhook-timestamp': String(now() - 1) }),
    ).toThrow();
  });

  it('needs at least one secret', () => {
    expect(() =>
      signPayload({ messageId: 'm', timestampSeconds: 1, body: '', secrets: [] }),
    ).toThrow(DomainError);
  });
});

describe('secrets', () => {
  it('generates valid secrets of the requested size', () => {
    expect(parseSecret(generateSecret())).toHaveLength(32);
    expect(parseSecret(generateSecret(64))).toHaveLength(64);
    expect(generateSecret()).not.toBe(generateSecret());
  });

  it.each([
    ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'no prefix'],
    ['whsec_not base64!!', 'not base64'],
    [`whsec_${Buffer.alloc(23).toString('base64')}`, 'too short'],
    [`whsec_${Buffer.alloc(65).toString('base64')}`, 'too long'],
    ['whsec_', 'empty'],
  ])('refuses %s (%s)', (secret) => {
    expect(isValidSecret(secret)).toBe(false);
    expect(() => parseSecret(secret)).toThrow(expect.objectContaining({ code: 'INVALID_SECRET' }));
  });

  it('accepts the boundaries 24 and 64 bytes', () => {
    expect(isValidSecret(`whsec_${Buffer.alloc(24, 1).toString('base64')}`)).toBe(true);
    expect(isValidSecret(`whsec_${Buffer.alloc(64, 1).toString('base64')}`)).toBe(true);
  });
});
