import fc from 'fast-check';
import {
  applyDeliveryEvent,
  DELIVERY_EVENTS,
  DELIVERY_ORIGINS,
  DELIVERY_STATES,
  DELIVERY_TRANSITIONS,
  DeliveryEvent,
  DeliveryState,
  DeliveryStateError,
  eventAfterAttempt,
  FINAL_STATUSES,
  isFinal,
  LANE_QUEUED_STATUSES,
  nextDeliveryState,
  shownNextAttemptAt,
  statusesOn,
  transitionsOf,
} from './delivery-state';
import { MESSAGE_STATUSES } from './model';

const key = (state: DeliveryState) => `${state.route}/${state.status}`;

/**
 * The table written out by hand, independently of the module: every legal transition as
 * `from -> to` per event. Every (state, event) pair not listed here must be refused.
 */
const EXPECTED: Record<DeliveryEvent, string[]> = {
  claimed_for_retry: [
    'schedule/awaiting_retry -> schedule/in_flight',
    'schedule/in_flight -> schedule/in_flight',
  ],
  attempt_started: [
    'stream/pending -> stream/in_flight',
    'stream/in_flight -> stream/in_flight',
    'schedule/in_flight -> schedule/in_flight',
    'lane/fifo_waiting -> lane/in_flight',
    'lane/awaiting_retry -> lane/in_flight',
  ],
  attempt_succeeded: [
    'stream/pending -> final/succeeded',
    'stream/in_flight -> final/succeeded',
    'schedule/in_flight -> final/succeeded',
    'lane/fifo_waiting -> final/succeeded',
    'lane/in_flight -> final/succeeded',
    'lane/awaiting_retry -> final/succeeded',
  ],
  retry_scheduled: [
    'stream/pending -> schedule/awaiting_retry',
    'stream/in_flight -> schedule/awaiting_retry',
    'schedule/in_flight -> schedule/awaiting_retry',
    'lane/fifo_waiting -> lane/awaiting_retry',
    'lane/in_flight -> lane/awaiting_retry',
    'lane/awaiting_retry -> lane/awaiting_retry',
  ],
  dead_lettered: [
    'stream/pending -> final/failed',
    'stream/in_flight -> final/failed',
    'schedule/in_flight -> final/failed',
    'lane/fifo_waiting -> final/failed',
    'lane/in_flight -> final/failed',
    'lane/awaiting_retry -> final/failed',
  ],
  held: [
    'stream/pending -> schedule/awaiting_retry',
    'stream/in_flight -> schedule/awaiting_retry',
    'schedule/in_flight -> schedule/awaiting_retry',
  ],
  parked_in_lane: ['stream/pending -> lane/fifo_waiting'],
  handed_back: [
    'lane/fifo_waiting -> schedule/awaiting_retry',
    'lane/in_flight -> schedule/awaiting_retry',
    'lane/awaiting_retry -> schedule/awaiting_retry',
  ],
  polled: ['poll/pending -> final/succeeded'],
  expired: [
    'stream/pending -> final/expired',
    'stream/in_flight -> final/expired',
    'schedule/awaiting_retry -> final/expired',
    'schedule/in_flight -> final/expired',
    'lane/fifo_waiting -> final/expired',
    'lane/in_flight -> final/expired',
    'lane/awaiting_retry -> final/expired',
    'poll/pending -> final/expired',
  ],
  cancelled: [
    'stream/pending -> final/cancelled',
    'stream/in_flight -> final/cancelled',
    'schedule/awaiting_retry -> final/cancelled',
    'schedule/in_flight -> final/cancelled',
    'lane/fifo_waiting -> final/cancelled',
    'lane/in_flight -> final/cancelled',
    'lane/awaiting_retry -> final/cancelled',
    'poll/pending -> final/cancelled',
  ],
  skipped: ['stream/pending -> final/skipped', 'stream/in_flight -> final/skipped'],
};

const STATE_KEYS = [
  'stream/pending',
  'stream/in_flight',
  'schedule/awaiting_retry',
  'schedule/in_flight',
  'lane/fifo_waiting',
  'lane/in_flight',
  'lane/awaiting_retry',
  'poll/pending',
  'final/succeeded',
  'final/failed',
  'final/cancelled',
  'final/skipped',
  'final/expired',
];

function expectedNext(from: DeliveryState, event: DeliveryEvent): string | null {
  const row = EXPECTED[event].find((line) => line.startsWith(`${key(from)} -> `));
  return row ? row.split(' -> ')[1] : null;
}

describe('delivery states', () => {
  it('are exactly the status/route pairs that exist', () => {
    expect(DELIVERY_STATES.map(key)).toEqual(STATE_KEYS);
  });

  it('give every message status a place', () => {
    for (const status of MESSAGE_STATUSES) {
      expect(DELIVERY_STATES.some((state) => state.status === status)).toBe(true);
    }
  });

  it('are final exactly on the final route', () => {
    for (const state of DELIVERY_STATES) {
      expect(isFinal(state.status)).toBe(state.route === 'final');
    }
    expect([...FINAL_STATUSES]).toEqual(['succeeded', 'failed', 'cancelled', 'skipped', 'expired']);
    expect([...LANE_QUEUED_STATUSES]).toEqual(['fifo_waiting', 'in_flight', 'awaiting_retry']);
    expect(statusesOn('stream')).toEqual(['pending', 'in_flight']);
    expect(statusesOn('schedule')).toEqual(['awaiting_retry', 'in_flight']);
    expect(statusesOn('poll')).toEqual(['pending']);
  });

  it('start where each origin says', () => {
    expect(
      Object.fromEntries(Object.entries(DELIVERY_ORIGINS).map(([o, s]) => [o, key(s)])),
    ).toEqual({
      recorded: 'stream/pending',
      recorded_for_polling: 'poll/pending',
      copied: 'schedule/awaiting_retry',
      copied_for_polling: 'poll/pending',
    });
  });
});

describe('delivery transitions', () => {
  const cases = DELIVERY_STATES.flatMap((from) =>
    DELIVERY_EVENTS.map((event) => [key(from), event, from] as const),
  );

  it.each(cases)('%s on %s', (_name, event, from) => {
    const expected = expectedNext(from, event);
    const next = nextDeliveryState(from, event);
    if (expected === null) {
      expect(next).toBeNull();
      expect(() => applyDeliveryEvent(from, event)).toThrow(DeliveryStateError);
    } else {
      expect(next && key(next)).toBe(expected);
      expect(key(applyDeliveryEvent(from, event))).toBe(expected);
    }
  });

  it('list each legal pair once, and only pairs of known states', () => {
    const pairs = DELIVERY_TRANSITIONS.map((t) => `${t.event} ${key(t.from)}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(DELIVERY_TRANSITIONS.length).toBe(
      Object.values(EXPECTED).reduce((n, rows) => n + rows.length, 0),
    );
    for (const t of DELIVERY_TRANSITIONS) {
      expect(STATE_KEYS).toContain(key(t.from));
      expect(STATE_KEYS).toContain(key(t.to));
    }
  });

  it('never leave a final state', () => {
    for (const t of DELIVERY_TRANSITIONS) expect(t.from.route).not.toBe('final');
  });

  it('are grouped by event', () => {
    expect(transitionsOf('parked_in_lane').map((t) => `${key(t.from)} -> ${key(t.to)}`)).toEqual(
      EXPECTED.parked_in_lane,
    );
  });

  it('refuse with a code', () => {
    const error = (() => {
      try {
        applyDeliveryEvent({ status: 'succeeded', route: 'final' }, 'held');
      } catch (caught) {
        return caught as DeliveryStateError;
      }
      return null;
    })();
    expect(error?.code).toBe('ILLEGAL_TRANSITION');
    expect(error?.message).toBe('no transition from final/succeeded on held');
  });

  it('name the event of each attempt decision', () => {
    expect(eventAfterAttempt('succeeded')).toBe('attempt_succeeded');
    expect(eventAfterAttempt('awaiting_retry')).toBe('retry_scheduled');
    expect(eventAfterAttempt('failed')).toBe('dead_lettered');
  });

  it('show a next attempt only while a retry is awaited', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    expect(shownNextAttemptAt({ status: 'awaiting_retry', nextAttemptAt: at })).toBe(at);
    for (const status of MESSAGE_STATUSES.filter((s) => s !== 'awaiting_retry')) {
      expect(shownNextAttemptAt({ status, nextAttemptAt: at })).toBeNull();
    }
  });
});

describe('delivery transitions, driven by random events', () => {
  const origins = Object.values(DELIVERY_ORIGINS) as DeliveryState[];

  it('reach only states the table allows, and nothing leaves a final state', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...origins),
        fc.array(fc.constantFrom(...DELIVERY_EVENTS), { maxLength: 60 }),
        (origin, events) => {
          let state: DeliveryState = origin;
          let finished: DeliveryState | null = null;
          for (const event of events) {
            const next = nextDeliveryState(state, event);
            const expected = expectedNext(state, event);
            // An event the table does not allow from here changes nothing.
            if (next === null) {
              expect(expected).toBeNull();
              continue;
            }
            expect(key(next)).toBe(expected);
            expect(STATE_KEYS).toContain(key(next));
            expect(finished).toBeNull();
            state = next;
            if (isFinal(state.status)) finished = state;
          }
          if (finished) expect(state).toEqual(finished);
          expect(isFinal(state.status)).toBe(state.route === 'final');
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
