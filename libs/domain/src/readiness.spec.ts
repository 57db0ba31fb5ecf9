import { readinessOf } from './readiness';

describe('readinessOf', () => {
  it('is ready when every check passed', () => {
    expect(readinessOf([{ name: 'postgresql' }, { name: 'kafka' }])).toEqual({
      ready: true,
      checks: [{ name: 'postgresql' }, { name: 'kafka' }],
    });
  });

  it('is ready with no dependency to check', () => {
    expect(readinessOf([])).toEqual({ ready: true, checks: [] });
  });

  it('is not ready when one check failed, naming it with its problem', () => {
    expect(
      readinessOf([{ name: 'postgresql' }, { name: 'kafka', problem: 'broker unreachable' }]),
    ).toEqual({
      ready: false,
      checks: [{ name: 'postgresql' }, { name: 'kafka', problem: 'broker unreachable' }],
      reasons: ['kafka: broker unreachable'],
    });
  });

  it('lists every failing check, in the order given', () => {
    const readiness = readinessOf([
      { name: 'postgresql', problem: 'connection refused' },
      { name: 'kafka' },
      { name: 'kafka-consumer:dispatcher', problem: 'not in its consumer group' },
    ]);
    expect(readiness.ready).toBe(false);
    expect(readiness.ready === false && readiness.reasons).toEqual([
      'postgresql: connection refused',
      'kafka-consumer:dispatcher: not in its consumer group',
    ]);
  });
});
