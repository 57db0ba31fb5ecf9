import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DELIVERY_TRANSITIONS, FINAL_STATUSES } from '@hookbase/domain';
import {
  finishedAt,
  inFromState,
  routeCheck,
  stateLiterals,
  statusIn,
  toState,
  transitionCase,
  transitionTable,
} from './delivery-transitions';

describe('delivery transitions in SQL', () => {
  it('list the rows of the events asked for, as the domain table has them', () => {
    expect(transitionTable(['parked_in_lane'])).toBe(
      `(VALUES ('parked_in_lane', 'pending', 'stream', 'fifo_waiting', 'lane')) AS t(event, from_status, from_route, to_status, to_route)`,
    );
    const table = transitionTable(['held', 'polled'], 'x');
    const rows = DELIVERY_TRANSITIONS.filter((t) => t.event === 'held' || t.event === 'polled');
    expect(table.match(/\('[a-z_]+', /g)).toHaveLength(rows.length);
    for (const t of rows) {
      expect(table).toContain(
        `('${t.event}', '${t.from.status}', '${t.from.route}', '${t.to.status}', '${t.to.route}')`,
      );
    }
    expect(table.endsWith(' AS x(event, from_status, from_route, to_status, to_route)')).toBe(true);
  });

  it('join, set and finish by the transition row', () => {
    expect(inFromState('m')).toBe('m.status = t.from_status AND m.route = t.from_route');
    expect(toState('u')).toBe('status = u.to_status, route = u.to_route');
    expect(finishedAt('t', 'NULL')).toBe(
      "finished_at = CASE WHEN t.to_route = 'final' THEN now() ELSE NULL END",
    );
    expect(stateLiterals({ status: 'pending', route: 'poll' })).toEqual({
      status: "'pending'",
      route: "'poll'",
    });
  });

  it("choose the transition by the message row's own columns, one CASE branch per table row", () => {
    expect(transitionCase(['parked_in_lane'], 'm')).toEqual({
      status: "CASE WHEN m.status = 'pending' AND m.route = 'stream' THEN 'fifo_waiting' END",
      route: "CASE WHEN m.status = 'pending' AND m.route = 'stream' THEN 'lane' END",
    });
    const events = ['attempt_succeeded', 'retry_scheduled', 'dead_lettered'] as const;
    const { status, route } = transitionCase(events, 'm', 'u.event');
    const rows = DELIVERY_TRANSITIONS.filter((t) =>
      (events as readonly string[]).includes(t.event),
    );
    for (const [column, pick] of [
      [status, (t: (typeof rows)[number]) => t.to.status],
      [route, (t: (typeof rows)[number]) => t.to.route],
    ] as const) {
      expect(column.match(/ WHEN /g)).toHaveLength(rows.length);
      for (const t of rows) {
        expect(column).toContain(
          `WHEN u.event = '${t.event}' AND m.status = '${t.from.status}' AND m.route = '${t.from.route}' THEN '${pick(t)}'`,
        );
      }
    }
    expect(() => transitionCase(events, 'm')).toThrow(/several events/);
  });

  it("agree with the migration's CHECK and backfill", () => {
    const migration = readFileSync(
      join(__dirname, '../migrations/1765238400000-explicit-delivery-state.ts'),
      'utf8',
    );
    const clauses = routeCheck().split(' OR ');
    expect(clauses).toHaveLength(5);
    for (const clause of clauses) expect(migration).toContain(clause);
    expect(migration).toContain(`WHEN ${statusIn('status', FINAL_STATUSES)} THEN 'final'`);
  });
});
