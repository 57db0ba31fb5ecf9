import { HOPS, hopFigures, joinStages, sampleEvents, StageRow, StageTimes } from './breakdown';

const stages = (
  sentAt: number,
  gaps: [number, number, number, number, number],
  afterFirstAttempt = 0,
): StageTimes => {
  const [accept, fanOut, wait, http, answer] = gaps;
  const acceptedAt = sentAt + accept;
  const fannedOutAt = acceptedAt + fanOut;
  const attemptStartedAt = fannedOutAt + wait;
  const receivedAt = attemptStartedAt + http;
  return {
    sentAt,
    acceptedAt,
    fannedOutAt,
    attemptStartedAt,
    eventFirstAttemptAt: attemptStartedAt - afterFirstAttempt,
    receivedAt,
    attemptEndedAt: receivedAt + answer,
  };
};

describe('hopFigures', () => {
  it('measures each hop between its two stages, in path order', () => {
    const figures = hopFigures([
      stages(1000, [2, 40, 7, 1, 0.5]),
      stages(2000, [4, 80, 9, 3, 1.5], 6),
    ]);
    expect(figures.map((f) => f.hop)).toEqual(HOPS.map((h) => h.hop));
    const p50 = Object.fromEntries(figures.map((f) => [f.hop, f.ms?.p50]));
    const p99 = Object.fromEntries(figures.map((f) => [f.hop, f.ms?.p99]));
    expect(p50).toEqual({
      'publish → accepted': 2,
      'accepted → fan-out': 40,
      'fan-out → attempt': 7,
      'attempt → received': 1,
      'received → answered': 0.5,
      'publish → received': 50,
      'first attempt → this': 0,
    });
    expect(p99['accepted → fan-out']).toBe(80);
    expect(p99['publish → received']).toBe(96);
    expect(p99['first attempt → this']).toBe(6);
  });

  it('has the first four hops add up to publish → received for every message', () => {
    const one = stages(0, [3, 17, 11, 2, 1]);
    const path = HOPS.slice(0, 4).reduce((sum, h) => sum + one[h.to] - one[h.from], 0);
    expect(path).toBe(one.receivedAt - one.sentAt);
    expect(hopFigures([]).every((f) => f.ms === null)).toBe(true);
  });
});

describe('joinStages', () => {
  const row = (eventId: string, endpointId: string, wall: number): StageRow => ({
    eventId,
    endpointId,
    acceptedMs: wall + 2,
    fannedOutMs: wall + 30,
    attemptStartedMs: wall + 40,
    durationMs: 3,
  });

  it("moves Hookbase's wall-clock times onto the bench's clock and joins the receipts", () => {
    const offset = 1_700_000_000_000;
    const { stages: joined, unmatched } = joinStages([row('evt_a', 'ep_x', offset + 100)], {
      event: (id) => (id === 'evt_a' ? { seq: 7, sentAt: 99 } : undefined),
      endpoints: new Map([['ep_x', 3]]),
      receivedAt: (seq, endpoint) => (seq === 7 && endpoint === 3 ? 141.5 : undefined),
      wallMinusBenchMs: offset,
    });
    expect(unmatched).toBe(0);
    expect(joined).toEqual([
      {
        sentAt: 99,
        acceptedAt: 102,
        fannedOutAt: 130,
        attemptStartedAt: 140,
        eventFirstAttemptAt: 140,
        receivedAt: 141.5,
        attemptEndedAt: 143,
      },
    ]);
  });

  it("gives each message its event's first attempt start", () => {
    const { stages: joined } = joinStages(
      [row('evt_a', 'ep_x', 0), { ...row('evt_a', 'ep_y', 0), attemptStartedMs: 35 }],
      {
        event: () => ({ seq: 1, sentAt: 0 }),
        endpoints: new Map([
          ['ep_x', 0],
          ['ep_y', 1],
        ]),
        receivedAt: () => 50,
        wallMinusBenchMs: 0,
      },
    );
    expect(joined.map((s) => [s.attemptStartedAt, s.eventFirstAttemptAt])).toEqual([
      [40, 35],
      [35, 35],
    ]);
  });

  it('leaves out and counts rows the ledger cannot place', () => {
    const { stages: joined, unmatched } = joinStages(
      [row('evt_unknown', 'ep_x', 0), row('evt_a', 'ep_unknown', 0), row('evt_a', 'ep_x', 0)],
      {
        event: (id) => (id === 'evt_a' ? { seq: 1, sentAt: Number.NaN } : undefined),
        endpoints: new Map([['ep_x', 0]]),
        receivedAt: () => 5,
        wallMinusBenchMs: 0,
      },
    );
    expect(joined).toEqual([]);
    expect(unmatched).toBe(3);
  });
});

describe('sampleEvents', () => {
  const events = Array.from({ length: 100 }, (_, i) => i);

  it('keeps every event while their messages stay under the cap', () => {
    expect(sampleEvents(events, 10, 1000)).toHaveLength(100);
  });

  it('keeps every n-th event so that the messages read stay under the cap', () => {
    const kept = sampleEvents(events, 1000, 20_000);
    expect(kept).toEqual([
      0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95,
    ]);
    expect(kept.length * 1000).toBeLessThanOrEqual(20_000);
  });
});
