import { NO_METRICS, TransitionMetrics } from '@hookbase/runtime';
import {
  countSkipped,
  DELIVERY_ROUTES,
  DeliveryEvent,
  DeliveryRoute,
  DeliveryState,
  MessageStatus,
  reportTransitions,
  statusesOn,
  TransitionReport,
  transitionsOf,
} from '@hookbase/domain';

/**
 * SQL for the delivery state machine of `libs/domain/src/delivery-state.ts`: every status write
 * sets status and route together to the state its event leads to from the message row's own
 * state, and leaves alone a message in a state the event does not move on from. The literals
 * come from the domain module's constants, never from input.
 *
 * The target state is a CASE over the row's own columns (`transitionCase`), never a join to a
 * list of transitions: when a write waits for a row another transaction is changing, PostgreSQL
 * re-checks only the row's new version against the rows it was first joined to (EvalPlanQual),
 * so a joined transition row of the state first seen would drop the write if the row had moved
 * on to another state the event also leaves. A CASE is evaluated afresh on the new version.
 */

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** The SQL of a transition for one message row: its new status and route, NULL when refused. */
export interface TransitionSql {
  /** The new status, or NULL when the table does not allow the event from the row's state. */
  status: string;
  /** The new route, or NULL likewise. */
  route: string;
  /** `status = …, route = …`, for the SET list. */
  set: string;
  /** The WHERE condition that the row's state allows the event. */
  allowed: string;
  /** `finished_at` once the transition ends the message, else `otherwise`. */
  finishedAt(otherwise: string): string;
}

/**
 * The state `events` lead to from the state of message row `message`, as CASE expressions over
 * that row's own columns (both NULL when the table does not allow it). `eventSql` is the event
 * of each row when there are several.
 */
export function transitionCase(
  events: readonly DeliveryEvent[],
  message: string,
  eventSql?: string,
): TransitionSql {
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
  const status = column((state) => state.status);
  const route = column((state) => state.route);
  return {
    status,
    route,
    set: `status = ${status}, route = ${route}`,
    allowed: `${status} IS NOT NULL`,
    finishedAt: (otherwise) =>
      `finished_at = CASE WHEN ${route} = 'final' THEN now() ELSE ${otherwise} END`,
  };
}

/** Runs one query, as `DataSource.query` or `EntityManager.query` do. */
export type RunQuery = (sql: string, parameters: unknown[]) => Promise<unknown>;

/**
 * The report of a write that was asked to move `asked` and moved `moved`: the state of each
 * message it left alone is read afterwards (one query, only when there is one) to say why, and
 * the skipped ones are counted on `metrics`.
 */
export async function settleTransitions(
  query: RunQuery,
  asked: readonly { messageId: string; event: DeliveryEvent }[],
  moved: Iterable<string>,
  metrics: TransitionMetrics = NO_METRICS,
): Promise<TransitionReport> {
  const movedIds = new Set(moved);
  const left = [...new Set(asked.map((a) => a.messageId).filter((id) => !movedIds.has(id)))];
  const found = new Map<string, DeliveryState>();
  if (left.length > 0) {
    const rows = (await query(`SELECT id, status, route FROM messages WHERE id = ANY($1)`, [
      left,
    ])) as { id: string; status: MessageStatus; route: DeliveryRoute }[];
    for (const row of rows) found.set(row.id, { status: row.status, route: row.route });
  }
  const report = reportTransitions(asked, movedIds, found);
  for (const { event, reason, count } of countSkipped(report.skipped)) {
    metrics.transitionsSkipped(event, reason, count);
  }
  return report;
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
