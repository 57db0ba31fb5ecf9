import { HookbaseApiError, HookbaseConnectionError } from '../client/errors';
import { Hookbase } from '../client/hookbase';
import { HookbaseEventSender, outcomeOf } from './event-sender';

const event = {
  id: '0b7f7f5e-2a59-4a5c-9a53-1b1c1d1e1f10',
  eventType: 'order.paid',
  payload: { orderId: 1 },
  endpointIds: null,
  idempotencyKey: '0b7f7f5e-2a59-4a5c-9a53-1b1c1d1e1f10',
};

describe('HookbaseEventSender: the relay on the SDK client', () => {
  it('sends the row with its idempotency key, retrying a 503 with the same key', async () => {
    const bodies: { idempotencyKey?: string }[] = [];
    const fetch = async (request: Request) => {
      bodies.push((await request.json()) as { idempotencyKey?: string });
      if (bodies.length === 1) {
        return Response.json(
          { error: { code: 'NOT_ACCEPTED', message: 'later' } },
          { status: 503 },
        );
      }
      return Response.json(
        { data: { id: 'evt_1', eventType: 'order.paid', acceptedAt: 'now', duplicate: true } },
        { status: 202 },
      );
    };
    const hookbase = new Hookbase({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'hb_x',
      fetch: fetch as typeof globalThis.fetch,
      retry: { initialDelayMs: 1, maxDelayMs: 1 },
    });
    const outcome = await new HookbaseEventSender(hookbase).send(event);
    expect(outcome).toEqual({ kind: 'accepted', eventId: 'evt_1', duplicate: true });
    expect(bodies.map((b) => b.idempotencyKey)).toEqual([event.id, event.id]);
  });

  it('turns what the client throws into the relay outcome', () => {
    expect(outcomeOf(new HookbaseApiError(422, 'VALIDATION_FAILED', 'bad'))).toEqual({
      kind: 'rejected',
      status: 422,
      code: 'VALIDATION_FAILED',
      message: 'bad',
    });
    expect(outcomeOf(new HookbaseApiError(503, 'NOT_ACCEPTED', 'busy', undefined, 2))).toEqual({
      kind: 'retry',
      reason: '503 NOT_ACCEPTED: busy',
      retryAfterMs: 2000,
    });
    expect(outcomeOf(new HookbaseApiError(401, 'UNAUTHORIZED', 'key'))).toMatchObject({
      kind: 'retry',
    });
    expect(outcomeOf(new HookbaseConnectionError('TIMEOUT', 'no answer'))).toEqual({
      kind: 'retry',
      reason: 'network: TIMEOUT: no answer',
    });
  });
});
