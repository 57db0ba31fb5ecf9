import { laneActivity } from './lane-activity';

describe('laneActivity', () => {
  it.each([
    [{ inFlight: true, awaitingRetry: false, circuitOpen: false }, { state: 'running' }],
    [{ inFlight: true, awaitingRetry: true, circuitOpen: false }, { state: 'running' }],
    [{ inFlight: false, awaitingRetry: true, circuitOpen: false }, { state: 'retrying' }],
    [{ inFlight: false, awaitingRetry: false, circuitOpen: false }, { state: 'queued' }],
    [
      { inFlight: false, awaitingRetry: true, circuitOpen: true },
      { state: 'blocked', reason: 'circuit_open' },
    ],
    [
      { inFlight: false, awaitingRetry: false, circuitOpen: true },
      { state: 'blocked', reason: 'circuit_open' },
    ],
  ])('an active endpoint with %j is %j', (head, expected) => {
    expect(laneActivity({ endpointStatus: 'active', ...head })).toEqual(expected);
  });

  it.each([
    ['paused', 'endpoint_paused'],
    ['disabled', 'endpoint_disabled'],
  ] as const)('a %s endpoint blocks its lane whatever its head does', (endpointStatus, reason) => {
    for (const inFlight of [true, false]) {
      for (const awaitingRetry of [true, false]) {
        for (const circuitOpen of [true, false]) {
          expect(laneActivity({ endpointStatus, inFlight, awaitingRetry, circuitOpen })).toEqual({
            state: 'blocked',
            reason,
          });
        }
      }
    }
  });
});
