import type { MessageStatus } from './model';

/**
 * A message's delivery state: its status, and the route that owns it (which part of Hookbase
 * moves it on next). Every change of status is one of the transitions below, caused by a named
 * event; a write that the table does not allow changes nothing. The repositories in
 * libs/persistence apply these transitions in SQL and derive every list of statuses from here.
 */

/**
 * - `stream`: on the deliveries topic's path; the dispatcher that owns its partition sends it.
 * - `schedule`: on the retry schedule (PostgreSQL); a dispatcher claims it when it is due.
 * - `lane`: queued in its endpoint's FIFO lane; the lane's lease holder sends it, in order.
 * - `poll`: in a polling endpoint's poll log; a consumer fetches it, nothing is sent.
 * - `final`: finished; nothing moves it again.
 */
export const DELIVERY_ROUTES = ['stream', 'schedule', 'lane', 'poll', 'final'] as const;
export type DeliveryRoute = (typeof DELIVERY_ROUTES)[number];

export interface DeliveryState {
  status: MessageStatus;
  route: DeliveryRoute;
}

export const DELIVERY_EVENTS = [
  /** The retry scheduler claimed a due message (or one whose claim's lease ran out). */
  'claimed_for_retry',
  /**
   * An attempt is under way: marked before a retry's attempt; a message on the stream or a FIFO
   * lane's head is shown so once its attempt has taken a moment.
   */
  'attempt_started',
  'attempt_succeeded',
  /** The attempt failed and another one is due later (on the schedule, or as the lane's head). */
  'retry_scheduled',
  /** The attempt failed for good (permanent failure, attempts or age used up): DLQ. */
  'dead_lettered',
  /** It may not go now (endpoint paused or disabled, rate limit, circuit, no share): no attempt used. */
  'held',
  /** A new message of a FIFO endpoint joined its endpoint's lane. */
  'parked_in_lane',
  /** FIFO was turned off: the lane's queue goes back to unordered delivery. */
  'handed_back',
  /** A consumer moved its cursor past it in the poll log. */
  'polled',
  /** Too old to deliver (max age, or retention for a lane or poll log): DLQ, or skipped by polls. */
  'expired',
  /** Its endpoint was deleted: DLQ (`endpoint_deleted`). */
  'cancelled',
  /** A new message met its endpoint's open circuit: DLQ (`circuit_open`). */
  'skipped',
] as const;
export type DeliveryEvent = (typeof DELIVERY_EVENTS)[number];

/** How a message comes to exist, and the state it starts in. */
export const DELIVERY_ORIGINS = {
  /** The fan-out recorded it for a push endpoint: it goes out on the deliveries topic. */
  recorded: { status: 'pending', route: 'stream' },
  /** The fan-out recorded it for a polling endpoint, at its place in the poll log. */
  recorded_for_polling: { status: 'pending', route: 'poll' },
  /** A replay or DLQ retry copied it: due at once on the retry schedule. */
  copied: { status: 'awaiting_retry', route: 'schedule' },
  /** A replay or DLQ retry copied it for a polling endpoint: appended to the poll log. */
  copied_for_polling: { status: 'pending', route: 'poll' },
} as const satisfies Record<string, DeliveryState>;

export interface DeliveryTransition {
  event: DeliveryEvent;
  from: DeliveryState;
  to: DeliveryState;
}

const s = (route: DeliveryRoute, status: MessageStatus): DeliveryState => ({ status, route });

const STREAM_PENDING = s('stream', 'pending');
const STREAM_IN_FLIGHT = s('stream', 'in_flight');
const SCHEDULE_AWAITING = s('schedule', 'awaiting_retry');
const SCHEDULE_IN_FLIGHT = s('schedule', 'in_flight');
const LANE_WAITING = s('lane', 'fifo_waiting');
const LANE_IN_FLIGHT = s('lane', 'in_flight');
const LANE_AWAITING = s('lane', 'awaiting_retry');
const POLL_PENDING = s('poll', 'pending');

/** Every state a message can be in: the live ones, then the final ones. */
export const DELIVERY_STATES: readonly DeliveryState[] = [
  STREAM_PENDING,
  STREAM_IN_FLIGHT,
  SCHEDULE_AWAITING,
  SCHEDULE_IN_FLIGHT,
  LANE_WAITING,
  LANE_IN_FLIGHT,
  LANE_AWAITING,
  POLL_PENDING,
  s('final', 'succeeded'),
  s('final', 'failed'),
  s('final', 'cancelled'),
  s('final', 'skipped'),
  s('final', 'expired'),
];

const LANE = [LANE_WAITING, LANE_IN_FLIGHT, LANE_AWAITING];
/**
 * States an attempt is recorded from. A retry's claim marks it in flight before the attempt; a
 * message on the stream or a lane's head is shown in flight only once its attempt has taken a
 * moment (so a quick attempt costs no write before it), and may be recorded without that mark.
 */
const ATTEMPTED = [STREAM_PENDING, STREAM_IN_FLIGHT, SCHEDULE_IN_FLIGHT, ...LANE];
/** Every state a deleted endpoint or an age limit can end. */
const ENDABLE = [
  STREAM_PENDING,
  STREAM_IN_FLIGHT,
  SCHEDULE_AWAITING,
  SCHEDULE_IN_FLIGHT,
  ...LANE,
  POLL_PENDING,
];

function each(
  event: DeliveryEvent,
  from: readonly DeliveryState[],
  to: (from: DeliveryState) => DeliveryState,
): DeliveryTransition[] {
  return from.map((state) => ({ event, from: state, to: to(state) }));
}

/** The whole table: every legal (state, event) pair and the state it leads to. */
export const DELIVERY_TRANSITIONS: readonly DeliveryTransition[] = [
  ...each('claimed_for_retry', [SCHEDULE_AWAITING, SCHEDULE_IN_FLIGHT], () => SCHEDULE_IN_FLIGHT),
  ...each(
    'attempt_started',
    [STREAM_PENDING, STREAM_IN_FLIGHT, SCHEDULE_IN_FLIGHT, LANE_WAITING, LANE_AWAITING],
    (from) => s(from.route, 'in_flight'),
  ),
  ...each('attempt_succeeded', ATTEMPTED, () => s('final', 'succeeded')),
  ...each('retry_scheduled', ATTEMPTED, (from) =>
    from.route === 'lane' ? LANE_AWAITING : SCHEDULE_AWAITING,
  ),
  ...each('dead_lettered', ATTEMPTED, () => s('final', 'failed')),
  ...each('held', [STREAM_PENDING, STREAM_IN_FLIGHT, SCHEDULE_IN_FLIGHT], () => SCHEDULE_AWAITING),
  ...each('parked_in_lane', [STREAM_PENDING], () => LANE_WAITING),
  ...each('handed_back', LANE, () => SCHEDULE_AWAITING),
  ...each('polled', [POLL_PENDING], () => s('final', 'succeeded')),
  ...each('expired', ENDABLE, () => s('final', 'expired')),
  ...each('cancelled', ENDABLE, () => s('final', 'cancelled')),
  ...each('skipped', [STREAM_PENDING, STREAM_IN_FLIGHT], () => s('final', 'skipped')),
];

export type DeliveryStateErrorCode = 'ILLEGAL_TRANSITION';

export class DeliveryStateError extends Error {
  readonly code: DeliveryStateErrorCode = 'ILLEGAL_TRANSITION';
  constructor(
    public readonly from: DeliveryState,
    public readonly event: DeliveryEvent,
  ) {
    super(`no transition from ${from.route}/${from.status} on ${event}`);
    this.name = 'DeliveryStateError';
  }
}

function sameState(a: DeliveryState, b: DeliveryState): boolean {
  return a.status === b.status && a.route === b.route;
}

/** The state `event` leads to from `from`, or null when the table does not allow it. */
export function nextDeliveryState(from: DeliveryState, event: DeliveryEvent): DeliveryState | null {
  const found = DELIVERY_TRANSITIONS.find((t) => t.event === event && sameState(t.from, from));
  return found ? found.to : null;
}

/** Like `nextDeliveryState`, but an illegal transition throws (code ILLEGAL_TRANSITION). */
export function applyDeliveryEvent(from: DeliveryState, event: DeliveryEvent): DeliveryState {
  const to = nextDeliveryState(from, event);
  if (!to) throw new DeliveryStateError(from, event);
  return to;
}

/** The transitions of one event: the states it moves a message out of, and where to. */
export function transitionsOf(event: DeliveryEvent): DeliveryTransition[] {
  return DELIVERY_TRANSITIONS.filter((t) => t.event === event);
}

/** The statuses a message can have on a route. */
export function statusesOn(route: DeliveryRoute): MessageStatus[] {
  return DELIVERY_STATES.filter((state) => state.route === route).map((state) => state.status);
}

/** Statuses of a finished message: nothing sends it again, retention may prune it. */
export const FINAL_STATUSES: readonly MessageStatus[] = statusesOn('final');

/** Statuses of a message still queued in its endpoint's FIFO lane. */
export const LANE_QUEUED_STATUSES: readonly MessageStatus[] = statusesOn('lane');

export function isFinal(status: MessageStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

/** The event an attempt's decision amounts to (see `decideAfterAttempt`). */
export function eventAfterAttempt(
  status: Extract<MessageStatus, 'succeeded' | 'awaiting_retry' | 'failed'>,
): Extract<DeliveryEvent, 'attempt_succeeded' | 'retry_scheduled' | 'dead_lettered'> {
  switch (status) {
    case 'succeeded':
      return 'attempt_succeeded';
    case 'awaiting_retry':
      return 'retry_scheduled';
    case 'failed':
      return 'dead_lettered';
    default: {
      const unreachable: never = status;
      throw new Error(`unknown attempt decision ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The time of the next attempt as users see it: only a message waiting for a retry has one. */
export function shownNextAttemptAt(message: {
  status: MessageStatus;
  nextAttemptAt: Date | null;
}): Date | null {
  return message.status === 'awaiting_retry' ? message.nextAttemptAt : null;
}
