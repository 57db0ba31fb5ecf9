import { DeliveryState } from './delivery-state';
import { countSkipped, reportTransitions } from './transition-report';

const state = (route: DeliveryState['route'], status: DeliveryState['status']): DeliveryState => ({
  route,
  status,
});

describe('reportTransitions', () => {
  it('lists the moved messages in the order asked and says why each other one was left alone', () => {
    const report = reportTransitions(
      [
        { messageId: 'msg_a', event: 'held' },
        { messageId: 'msg_b', event: 'held' },
        { messageId: 'msg_c', event: 'held' },
        { messageId: 'msg_d', event: 'held' },
        { messageId: 'msg_e', event: 'attempt_started' },
      ],
      new Set(['msg_d', 'msg_a']),
      new Map([
        ['msg_a', state('schedule', 'awaiting_retry')],
        ['msg_b', state('final', 'succeeded')],
        ['msg_d', state('schedule', 'awaiting_retry')],
        ['msg_e', state('lane', 'awaiting_retry')],
      ]),
    );
    expect(report.transitioned).toEqual(['msg_a', 'msg_d']);
    expect(report.skipped).toEqual([
      {
        messageId: 'msg_b',
        event: 'held',
        reason: 'state_not_allowed',
        found: state('final', 'succeeded'),
      },
      { messageId: 'msg_c', event: 'held', reason: 'not_found', found: null },
      {
        messageId: 'msg_e',
        event: 'attempt_started',
        reason: 'condition_unmet',
        found: state('lane', 'awaiting_retry'),
      },
    ]);
  });

  it('counts a message asked for twice once', () => {
    const report = reportTransitions(
      [
        { messageId: 'msg_a', event: 'cancelled' },
        { messageId: 'msg_a', event: 'cancelled' },
        { messageId: 'msg_b', event: 'cancelled' },
        { messageId: 'msg_b', event: 'cancelled' },
      ],
      new Set(['msg_a']),
      new Map(),
    );
    expect(report.transitioned).toEqual(['msg_a']);
    expect(report.skipped.map((s) => s.messageId)).toEqual(['msg_b']);
  });
});

describe('countSkipped', () => {
  it('groups by event and reason', () => {
    expect(
      countSkipped([
        { messageId: 'a', event: 'held', reason: 'not_found', found: null },
        { messageId: 'b', event: 'held', reason: 'not_found', found: null },
        {
          messageId: 'c',
          event: 'held',
          reason: 'state_not_allowed',
          found: state('final', 'failed'),
        },
        {
          messageId: 'd',
          event: 'expired',
          reason: 'state_not_allowed',
          found: state('final', 'failed'),
        },
      ]),
    ).toEqual([
      { event: 'held', reason: 'not_found', count: 2 },
      { event: 'held', reason: 'state_not_allowed', count: 1 },
      { event: 'expired', reason: 'state_not_allowed', count: 1 },
    ]);
    expect(countSkipped([])).toEqual([]);
  });
});
