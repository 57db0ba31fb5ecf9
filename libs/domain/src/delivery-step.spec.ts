import { DeliveryEndpoint, nextDeliveryStep, refusedDeliveryStep } from './delivery-step';
import { ENDPOINT_STATUSES, EndpointStatus } from './model';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const at = (offsetMs: number) => new Date(NOW + offsetMs);
const now = at(0);
const HOUR = 3_600_000;

const endpoint = (over: Partial<DeliveryEndpoint> = {}): DeliveryEndpoint => ({
  status: 'active',
  deletedAt: null,
  retry: { maxAgeMs: HOUR },
  ...over,
});
const step = (over: { endpoint?: DeliveryEndpoint | null | undefined; acceptedAt?: Date } = {}) =>
  nextDeliveryStep(
    'endpoint' in over ? over.endpoint : endpoint(),
    over.acceptedAt ?? at(-1_000),
    now,
  );
const deleted = at(-5_000);

const cancel = { action: 'dead-letter', reason: 'endpoint_deleted', status: 'cancelled' };
const expire = { action: 'dead-letter', reason: 'max_age', status: 'expired' };

describe('nextDeliveryStep', () => {
  it('covers every endpoint status', () => {
    expect([...ENDPOINT_STATUSES].sort()).toEqual(['active', 'disabled', 'paused']);
  });

  describe.each(ENDPOINT_STATUSES)('an endpoint %s', (status: EndpointStatus) => {
    it('that is gone cancels the message into the DLQ, whatever its age', () => {
      expect(step({ endpoint: null })).toEqual(cancel);
      expect(step({ endpoint: undefined })).toEqual(cancel);
      expect(step({ endpoint: endpoint({ status, deletedAt: deleted }) })).toEqual(cancel);
      expect(
        step({ endpoint: endpoint({ status, deletedAt: deleted }), acceptedAt: at(-2 * HOUR) }),
      ).toEqual(cancel);
    });
  });

  it('sends to an active endpoint, whatever the message’s age (max age is for held messages)', () => {
    expect(step()).toEqual({ action: 'send' });
    expect(step({ acceptedAt: at(-2 * HOUR) })).toEqual({ action: 'send' });
  });

  describe.each(['paused', 'disabled'] as const)('a %s endpoint', (status) => {
    it('holds a message up to its max age', () => {
      expect(step({ endpoint: endpoint({ status }) })).toEqual({ action: 'hold' });
      expect(step({ endpoint: endpoint({ status }), acceptedAt: at(-HOUR) })).toEqual({
        action: 'hold',
      });
    });

    it('expires a message held past its max age into the DLQ', () => {
      expect(step({ endpoint: endpoint({ status }), acceptedAt: at(-HOUR - 1) })).toEqual(expire);
      expect(
        step({
          endpoint: endpoint({ status, retry: { maxAgeMs: 1_000 } }),
          acceptedAt: at(-1_001),
        }),
      ).toEqual(expire);
    });

    it('holds for the default max age (24 h) when the endpoint has no retry policy', () => {
      const noPolicy = endpoint({ status, retry: null });
      expect(step({ endpoint: noPolicy, acceptedAt: at(-24 * HOUR) })).toEqual({ action: 'hold' });
      expect(step({ endpoint: noPolicy, acceptedAt: at(-24 * HOUR - 1) })).toEqual(expire);
    });
  });

  it('allocates nothing per message: each step is one shared, frozen object', () => {
    expect(step()).toBe(step());
    expect(step({ endpoint: null })).toBe(step({ endpoint: null }));
    expect(Object.isFrozen(step())).toBe(true);
  });
});

describe('refusedDeliveryStep', () => {
  it('skips a new message meeting an open circuit into the DLQ', () => {
    expect(refusedDeliveryStep('new', 'circuit_open')).toEqual({
      action: 'dead-letter',
      reason: 'circuit_open',
      status: 'skipped',
    });
  });

  it('holds a scheduled copy (retry, hold, replay) for the circuit’s cooldown', () => {
    expect(refusedDeliveryStep('scheduled', 'circuit_open')).toEqual({ action: 'hold' });
  });

  it.each(['new', 'scheduled'] as const)(
    'holds a rate-limited %s message for its token',
    (source) => {
      expect(refusedDeliveryStep(source, 'rate_limited')).toEqual({ action: 'hold' });
    },
  );
});
