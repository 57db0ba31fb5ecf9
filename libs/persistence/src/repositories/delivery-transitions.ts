import {
  DELIVERY_ROUTES,
  DeliveryEvent,
  DeliveryState,
  MessageStatus,
  statusesOn,
  transitionsOf,
} from '@hookbase/domain';

/**
 * SQL for the delivery state machine of `libs/domain/src/delivery-state.ts`: every status write
 * joins the messages it changes to the table's rows for its event, so it sets status and route
 * together and leaves alone a message in a state the event does not move on from. The literals
 * come from the domain module's constants, never from input.
 */

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * The transitions of `events` as a table `alias(event, from_status, from_route, to_status,
 * to_route)`, to put in an UPDATE's FROM list.
 */
export function transitionTable(events: readonly DeliveryEvent[], alias = 't'): string {
  const rows = events.flatMap(transitionsOf);
  const values = rows.map((t) =>
    [t.event, t.from.status, t.from.route, t.to.status, t.to.route].map(literal).join(', '),
  );
  return `(VALUES (${values.join('), (')})) AS ${alias}(event, from_status, from_route, to_status, to_route)`;
}

/**
 * The state `events` lead to from the state of message row `message`, as CASE expressions over
 * that row's own columns (both NULL when the table does not allow it): for a write that may wait
 * for another write of the same row. PostgreSQL re-checks such a row's new version against the
 * rows it was first joined to, so a join to `transitionTable` would keep the transition row of the
 * state it first saw and change nothing if the row had moved on to another state the event also
 * leaves (a FIFO head shown as in flight while its attempt was being recorded). `eventSql` is the
 * event of each row when there are several.
 */
export function transitionCase(
  events: readonly DeliveryEvent[],
  message: string,
  eventSql?: string,
): { status: string; route: string } {
  if (events.length > 1 && !eventSql) {
    throw new Error('transitionCase: several events need the SQL that picks each row its event');
  }
  const rows = events.flatMap(transitionsOf);
  const when = (t: (typeof rows)[number]) =>
    [
      ...(events.length > 1 ? [`${eventSql} = ${literal(t.event)}`] : []),
      `${message}.status = ${literal(t.from.status)}`,
      `${message}.route = ${literal(t.from.route)}`,
    ].join(' AND ');
  const column = (pick: (state: DeliveryState) => string) =>
    `CASE ${rows.map((t) => `WHEN ${when(t)} THEN ${literal(pick(t.to))}`).join(' ')} END`;
  return { status: column((state) => state.status), route: column((state) => state.route) };
}

/** The join of message row `message` to transition row `alias`: its state is one the row moves on. */
export function inFromState(message: string, alias = 't'): string {
  return `${message}.status = ${alias}.from_status AND ${message}.route = ${alias}.from_route`;
}

/** The SET of status and route from transition row `alias`. */
export function toState(alias = 't'): string {
  return `status = ${alias}.to_status, route = ${alias}.to_route`;
}

/** `finished_at` once the transition ends the message, else `otherwise`. */
export function finishedAt(alias: string, otherwise: string): string {
  return `finished_at = CASE WHEN ${alias}.to_route = 'final' THEN now() ELSE ${otherwise} END`;
}

/** `(column IN (…))` for statuses, e.g. the final ones. */
export function statusIn(column: string, statuses: readonly MessageStatus[]): string {
  return `${column} IN (${statuses.map(literal).join(', ')})`;
}

/** The route and status columns' values for a new message starting in `state`. */
export function stateLiterals(state: DeliveryState): { status: string; route: string } {
  return { status: literal(state.status), route: literal(state.route) };
}

/** The statuses a route allows, for a CHECK that agrees with the domain table. */
export function routeCheck(): string {
  return DELIVERY_ROUTES.map(
    (route) => `(route = '${route}' AND ${statusIn('status', statusesOn(route))})`,
  ).join(' OR ');
}
