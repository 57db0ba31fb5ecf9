import {
  isOperationalEventType,
  OPERATIONAL_EVENT_TYPES,
  operationalPayload,
  operationalRecipients,
  operationalRouteAllows,
} from './operational-events';
import { matchRecipients } from './recipients';

describe('operational routing', () => {
  const ops = { id: 'ep_ops', operational: true };
  const customer = { id: 'ep_customer', operational: false };

  it('sends an operational endpoint only operational events Hookbase wrote, addressed to it', () => {
    const addressed = {
      eventType: 'endpoint.disabled',
      endpointIds: ['ep_ops'],
      operational: true,
    };
    expect(operationalRouteAllows(ops, addressed)).toBe(true);
    // A customer's publish of the same event (not written by Hookbase) does not get through.
    expect(operationalRouteAllows(ops, { ...addressed, operational: false })).toBe(false);
    expect(operationalRouteAllows(ops, { ...addressed, operational: undefined })).toBe(false);
    expect(operationalRouteAllows(ops, { ...addressed, endpointIds: undefined })).toBe(false);
    expect(operationalRouteAllows(ops, { ...addressed, endpointIds: ['ep_x'] })).toBe(false);
    expect(operationalRouteAllows(ops, { ...addressed, eventType: 'order.created' })).toBe(false);
  });

  it('leaves other endpoints to their own filters', () => {
    expect(operationalRouteAllows(customer, { eventType: 'order.created' })).toBe(true);
    expect(operationalRouteAllows({ id: 'ep_old' }, { eventType: 'endpoint.created' })).toBe(true);
  });

  it('is applied by recipient resolution', () => {
    const candidates = [
      { ...ops, status: 'active' as const, eventTypes: [], deleted: false },
      { ...customer, status: 'active' as const, eventTypes: [], deleted: false },
    ];
    expect(matchRecipients(candidates, { eventType: 'order.created' }).map((c) => c.id)).toEqual([
      'ep_customer',
    ]);
    expect(
      matchRecipients(candidates, {
        eventType: 'endpoint.created',
        endpointIds: ['ep_ops'],
        operational: true,
      }).map((c) => c.id),
    ).toEqual(['ep_ops']);
  });

  it('picks the live operational endpoints subscribed to a type', () => {
    expect(
      operationalRecipients(
        [
          { id: 'a', status: 'active', eventTypes: [] },
          { id: 'b', status: 'active', eventTypes: ['endpoint.disabled'] },
          { id: 'c', status: 'active', eventTypes: ['endpoint.created'] },
          { id: 'd', status: 'disabled', eventTypes: [] },
          { id: 'e', status: 'paused', eventTypes: [] },
        ],
        'endpoint.disabled',
      ),
    ).toEqual(['a', 'b', 'e']);
  });

  it('knows its types and shapes its payloads', () => {
    for (const type of OPERATIONAL_EVENT_TYPES) expect(isOperationalEventType(type)).toBe(true);
    expect(isOperationalEventType('order.created')).toBe(false);
    expect(
      operationalPayload('endpoint.disabled', 'ep_1', new Date('2026-01-01T00:00:00Z'), {
        reason: 'failing',
      }),
    ).toEqual({
      type: 'endpoint.disabled',
      timestamp: '2026-01-01T00:00:00.000Z',
      data: { endpointId: 'ep_1', reason: 'failing' },
    });
  });
});
