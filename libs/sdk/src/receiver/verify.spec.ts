import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationFailed } from './verify';

const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
const other = 'whsec_' + Buffer.alloc(32, 8).toString('base64');

function signed(body: string, at: Date, key = secret) {
  return {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign('msg_1', at, body),
    'hookbase-event-id': 'evt_1',
    'hookbase-event-type': 'order.paid',
    'hookbase-attempt': '2',
  };
}

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationFailed) return error.code;
    throw error;
  }
  throw new Error('verification passed');
}

describe('verifyWebhook', () => {
  const body = '{"order":42}';
  // The package checks the timestamp against the real clock too: sign around now.
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);

  it('answers the parsed event for a correct signature', () => {
    const event = verifyWebhook(Buffer.from(body), signed(body, now), { secret, now: () => now });
    expect(event).toEqual({
      id: 'msg_1',
      timestamp: now,
      eventId: 'evt_1',
      eventType: 'order.paid',
      attempt: 2,
      payload: { order: 42 },
    });
  });

  it('accepts any of several secrets (rotation) and a Headers object', () => {
    const headers = new Headers(signed(body, now));
    expect(verifyWebhook(body, headers, { secret: [other, secret], now: () => now }).id).toBe(
      'msg_1',
    );
  });

  it('refuses a tampered body, another secret, missing headers and an old or future timestamp', () => {
    const options = { secret, now: () => now };
    expect(failure(() => verifyWebhook('{"order":43}', signed(body, now), options))).toBe(
      'INVALID_SIGNATURE',
    );
    expect(failure(() => verifyWebhook(body, signed(body, now, other), options))).toBe(
      'INVALID_SIGNATURE',
    );
    expect(failure(() => verifyWebhook(body, { 'webhook-id': 'msg_1' }, options))).toBe(
      'MISSING_HEADERS',
    );
    const old = new Date(now.getTime() - 301_000);
    expect(failure(() => verifyWebhook(body, signed(body, old), options))).toBe(
      'TIMESTAMP_OUT_OF_TOLERANCE',
    );
    const future = new Date(now.getTime() + 301_000);
    expect(failure(() => verifyWebhook(body, signed(body, future), options))).toBe(
      'TIMESTAMP_OUT_OF_TOLERANCE',
    );
  });

  it('applies a tighter tolerance when asked', () => {
    const before = new Date(now.getTime() - 60_000);
    const headers = signed(body, before);
    expect(verifyWebhook(body, headers, { secret, now: () => now }).id).toBe('msg_1');
    expect(
      failure(() => verifyWebhook(body, headers, { secret, toleranceSeconds: 30, now: () => now })),
    ).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
  });
});
