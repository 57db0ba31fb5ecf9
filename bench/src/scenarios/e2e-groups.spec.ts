import { UsageError } from '../core/options';
import {
  comparableCommand,
  groupOf,
  groupSpread,
  offeredDeliveries,
  refineGroups,
  splitEvenly,
} from './e2e-groups';

describe('splitEvenly', () => {
  it('gives every group one endpoint when there are as many endpoints as groups', () => {
    expect(splitEvenly(3, 3)).toEqual([[0], [1], [2]]);
  });

  it('splits into contiguous blocks whose sizes differ by one at most, from `first`', () => {
    const blocks = splitEvenly(10, 4, 100);
    expect(blocks).toEqual([
      [100, 101, 102],
      [103, 104, 105],
      [106, 107],
      [108, 109],
    ]);
    expect(blocks.flat()).toEqual(Array.from({ length: 10 }, (_, i) => 100 + i));
    expect(splitEvenly(1000, 100).every((b) => b.length === 10)).toBe(true);
  });

  it('refuses fewer endpoints than groups, and no groups', () => {
    expect(() => splitEvenly(2, 3)).toThrow('2 endpoints cannot be split over 3 groups');
    expect(() => splitEvenly(2, 0)).toThrow('parts must be ≥ 1');
  });
});

describe('groupOf and offeredDeliveries', () => {
  it('goes round-robin over the groups', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((seq) => groupOf(seq, 3))).toEqual([0, 1, 2, 0, 1, 2, 0]);
    expect(groupOf(41, 1)).toBe(0);
  });

  it('offers the rate times the mean group size', () => {
    expect(offeredDeliveries(500, Array(100).fill(1))).toBe(500);
    expect(offeredDeliveries(1000, Array(100).fill(10))).toBe(10_000);
    expect(offeredDeliveries(3, [1000])).toBe(3000);
    expect(offeredDeliveries(2, [3, 2])).toBe(5);
    expect(offeredDeliveries(2, [])).toBe(0);
  });
});

describe('refineGroups', () => {
  it('gives each organization one endpoint unless --endpoints says otherwise', () => {
    expect(refineGroups({ organizations: 100 })).toEqual({ endpoints: 100 });
    expect(refineGroups({ organizations: 100, endpoints: 300 })).toEqual({});
    expect(refineGroups({})).toEqual({});
    expect(refineGroups({ applications: 100 })).toEqual({});
  });

  it('refuses groups without an endpoint each, and both kinds of group at once', () => {
    expect(() => refineGroups({ organizations: 10, endpoints: 5 })).toThrow(UsageError);
    expect(() => refineGroups({ applications: 100, endpoints: 99 })).toThrow(
      '--endpoints (99) must be at least the applications (100)',
    );
    expect(() => refineGroups({ organizations: 2, applications: 2 })).toThrow('not both');
    // --organizations 1 is the default: applications go with it.
    expect(refineGroups({ organizations: 1, applications: 5, endpoints: 5 })).toEqual({});
  });
});

describe('comparableCommand', () => {
  it('offers the same deliveries/s to the same endpoints without groups', () => {
    expect(
      comparableCommand({ endpoints: 1000, rate: 100, durationSeconds: 20, groups: 100 }),
    ).toBe('npm run bench -- e2e --endpoints 1000 --rate 1 --duration 20');
    expect(comparableCommand({ endpoints: 100, rate: 500, durationSeconds: 5, groups: 100 })).toBe(
      'npm run bench -- e2e --endpoints 100 --rate 5 --duration 5',
    );
    expect(comparableCommand({ endpoints: 30, rate: 1, durationSeconds: 5, groups: 3 })).toBe(
      'npm run bench -- e2e --endpoints 30 --rate 0.3333 --duration 5',
    );
    expect(comparableCommand({ endpoints: 1000, rate: 1, durationSeconds: 20, groups: 1 })).toBe(
      null,
    );
  });
});

describe('groupSpread', () => {
  const groupOfEndpoint = new Map([
    [0, 0],
    [1, 0],
    [2, 1],
    [3, 2],
  ]);

  it("gives the median and the worst of the groups' p99s, and which group was worst", () => {
    const deliveries = [
      ...[10, 20, 30].map((latencyMs) => ({ endpoint: 0, latencyMs })),
      { endpoint: 1, latencyMs: 40 },
      ...[5, 500].map((latencyMs) => ({ endpoint: 2, latencyMs })),
      { endpoint: 3, latencyMs: 60 },
      // An endpoint of no group is left out.
      { endpoint: 9, latencyMs: 9_999 },
    ];
    expect(groupSpread(deliveries, groupOfEndpoint)).toEqual({
      groups: 3,
      medianP99: 60,
      worstP99: 500,
      worstGroup: 1,
    });
  });

  it('has nothing to compare with fewer than two groups', () => {
    expect(groupSpread([{ endpoint: 0, latencyMs: 1 }], groupOfEndpoint)).toBeNull();
    expect(groupSpread([], groupOfEndpoint)).toBeNull();
  });
});
