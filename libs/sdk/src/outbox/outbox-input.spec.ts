import { OutboxError } from './errors';
import { validateOutboxEvent } from './outbox-input';

function refusal(input: unknown, max?: number): OutboxError {
  try {
    validateOutboxEvent(input, max);
  } catch (error) {
    if (error instanceof OutboxError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('validateOutboxEvent', () => {
  it('accepts what POST /v1/events accepts and keeps the payload as JSON text', () => {
    expect(
      validateOutboxEvent({
        eventType: 'order.paid',
        payload: { orderId: 7, lines: [{ sku: 'a' }] },
        idempotencyKey: 'order-7-paid',
        endpointIds: ['ep_0123456789abcdefghijklmnop'],
      }),
    ).toEqual({
      eventType: 'order.paid',
      payloadJson: '{"orderId":7,"lines":[{"sku":"a"}]}',
      idempotencyKey: 'order-7-paid',
      endpointIds: ['ep_0123456789abcdefghijklmnop'],
    });
    expect(validateOutboxEvent({ eventType: 'x', payload: {} })).toEqual({
      eventType: 'x',
      payloadJson: '{}',
    });
  });

  it('refuses what the API refuses, with VALIDATION_FAILED and the issues', () => {
    const missing = refusal({ payload: {} });
    expect(missing.code).toBe('VALIDATION_FAILED');
    expect(missing.details).toEqual({ issues: [expect.objectContaining({ path: 'eventType' })] });
    expect(refusal({ eventType: 'bad type!', payload: {} }).code).toBe('VALIDATION_FAILED');
    expect(refusal({ eventType: 'x', payload: [] }).code).toBe('VALIDATION_FAILED');
    expect(refusal({ eventType: 'x', payload: {}, extra: 1 }).code).toBe('VALIDATION_FAILED');
    expect(refusal({ eventType: 'x', payload: { s: 'a\u0000b' } }).code).toBe('VALIDATION_FAILED');
    expect(refusal(null).code).toBe('VALIDATION_FAILED');
  });

  it('refuses payloads the API could not take whole: unsafe integers, deep nesting, BigInt', () => {
    expect(refusal({ eventType: 'x', payload: { n: 2 ** 60 } }).message).toMatch(/payload/);
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 80; i++) deep = { d: deep };
    expect(refusal({ eventType: 'x', payload: deep }).message).toMatch(/nested deeper/);
    expect(refusal({ eventType: 'x', payload: { n: BigInt(1) } }).message).toMatch(/not JSON/);
  });

  it('refuses an event larger than the request size limit', () => {
    const payload = { text: 'x'.repeat(1000) };
    expect(validateOutboxEvent({ eventType: 'x', payload }, 1100).eventType).toBe('x');
    expect(refusal({ eventType: 'x', payload }, 1000).message).toMatch(/larger than 1000 bytes/);
  });
});
