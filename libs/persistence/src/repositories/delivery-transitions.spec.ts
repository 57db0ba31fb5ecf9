import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DELIVERY_TRANSITIONS, FINAL_STATUSES } from '@hookbase/domain';
import {
  routeCheck,
  settleTransitions,
  stateLiterals,
  statusIn,
  transitionCase,
} from './delivery-transitions';

describe('delivery transitions in SQL', () => {
  it('set, guard and finish by the CASE over the row, and give a new message its literals', () => {
    const held = transitionCase(['held'], 'm');
    expect(held.set).toBe(`status = ${held.status}, route = ${held.route}`);
    expect(held.allowed).toBe(`${held.status} IS NOT NULL`);
    expect(held.finishedAt('NULL')).toBe(
      `finished_at = CASE WHEN ${held.route} = 'final' THEN now() ELSE NULL END`,
    );
    expect(stateLiterals({ status: 'pending', route: 'poll' })).toEqual({
      status: "'pending'",
      route: "'poll'",
    });
  });

  it("choose the transition by the message row's own columns, one CASE branch per table row", () => {
    expect(transitionCase(['parked_in_lane'], 'm')).toMatchObject({
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

  it('read the state of the messages a write left alone, and only when there are some', async () => {
    const queries: unknown[][] = [];
    const query = async (sql: string, parameters: unknown[]) => {
      queries.push([sql, parameters]);
      return [{ id: 'msg_b', status: 'succeeded', route: 'final' }];
    };
    const asked = ['msg_a', 'msg_b', 'msg_c'].map((messageId) => ({
      messageId,
      event: 'held' as const,
    }));
    const counted: unknown[][] = [];
    const metrics = { transitionsSkipped: (...args: unknown[]) => void counted.push(args) };
    expect(await settleTransitions(query, asked, ['msg_a'], metrics)).toEqual({
      transitioned: ['msg_a'],
      skipped: [
        {
          messageId: 'msg_b',
          event: 'held',
          reason: 'state_not_allowed',
          found: { status: 'succeeded', route: 'final' },
        },
        { messageId: 'msg_c', event: 'held', reason: 'not_found', found: null },
      ],
    });
    expect(queries).toEqual([
      ['SELECT id, status, route FROM messages WHERE id = ANY($1)', [['msg_b', 'msg_c']]],
    ]);
    expect(counted).toEqual([
      ['held', 'state_not_allowed', 1],
      ['held', 'not_found', 1],
    ]);
    queries.length = 0;
    counted.length = 0;
    expect(await settleTransitions(query, asked, ['msg_c', 'msg_b', 'msg_a'], metrics)).toEqual({
      transitioned: ['msg_a', 'msg_b', 'msg_c'],
      skipped: [],
    });
    expect(queries).toEqual([]);
    expect(counted).toEqual([]);
  });
});
