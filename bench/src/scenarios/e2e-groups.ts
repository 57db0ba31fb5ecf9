import { UsageError } from '../core/options';
import { percentile } from '../core/stats';

/**
 * How e2e spreads its endpoints and its events. A recipient group is what one event reaches: the
 * one organization (the default), one of --organizations organizations (its own API key), or one
 * of --applications applications of one organization (`applicationId` in the publish body).
 */

/** `total` endpoint indexes from `first` in `parts` contiguous blocks, sizes differing by one at most. */
export function splitEvenly(total: number, parts: number, first = 0): number[][] {
  if (!Number.isInteger(parts) || parts < 1) throw new Error(`parts must be ≥ 1, got ${parts}`);
  if (total < parts) throw new Error(`${total} endpoints cannot be split over ${parts} groups`);
  const base = Math.floor(total / parts);
  const larger = total % parts;
  const blocks: number[][] = [];
  let next = first;
  for (let k = 0; k < parts; k++) {
    const size = base + (k < larger ? 1 : 0);
    blocks.push(Array.from({ length: size }, (_, i) => next + i));
    next += size;
  }
  return blocks;
}

/** The group event `seq` goes to: round-robin, so consecutive events go to different groups. */
export const groupOf = (seq: number, groups: number) => seq % groups;

/** Deliveries/s offered when `rate` events/s go round-robin over groups of these sizes. */
export function offeredDeliveries(rate: number, groupSizes: readonly number[]): number {
  if (groupSizes.length === 0) return 0;
  return (rate * groupSizes.reduce((sum, size) => sum + size, 0)) / groupSizes.length;
}

/** What e2e was asked for, as the group split reads it. */
export interface GroupAsk {
  endpoints?: number;
  organizations?: number;
  applications?: number;
}

/**
 * The contradictions of e2e's group flags, and its defaults: --organizations without --endpoints
 * gives each organization one endpoint; every group needs at least one endpoint.
 */
export function refineGroups(given: GroupAsk): { endpoints?: number } {
  const organizations = given.organizations ?? 1;
  const applications = given.applications ?? 0;
  if (organizations > 1 && applications > 0)
    throw new UsageError('e2e takes --organizations or --applications, not both');
  const endpoints =
    given.endpoints ?? (given.organizations !== undefined ? given.organizations : undefined);
  const groups = Math.max(organizations, applications);
  if (endpoints !== undefined && endpoints < groups)
    throw new UsageError(
      `--endpoints (${endpoints}) must be at least the ${applications > 0 ? 'applications' : 'organizations'} (${groups}): each needs an endpoint`,
    );
  return given.endpoints === undefined && given.organizations !== undefined
    ? { endpoints: given.organizations }
    : {};
}

/** A rate as a command line takes it: up to 4 decimals, no trailing zeros. */
const rateArg = (rate: number) => String(Number(rate.toFixed(4)));

/**
 * The run that offers the same deliveries/s with the same endpoints and no groups (every event
 * to every endpoint): --rate divided by the number of groups. Null with one group.
 */
export function comparableCommand(ask: {
  endpoints: number;
  rate: number;
  durationSeconds: number;
  groups: number;
}): string | null {
  if (ask.groups <= 1) return null;
  return `npm run bench -- e2e --endpoints ${ask.endpoints} --rate ${rateArg(ask.rate / ask.groups)} --duration ${ask.durationSeconds}`;
}

/**
 * How evenly the groups were served: each group's p99 of its deliveries' latencies (nearest rank),
 * then the median and the worst of those p99s. Null when fewer than two groups delivered.
 */
export function groupSpread(
  deliveries: readonly { endpoint: number; latencyMs: number }[],
  groupOfEndpoint: ReadonlyMap<number, number>,
): { groups: number; medianP99: number; worstP99: number; worstGroup: number } | null {
  const byGroup = new Map<number, number[]>();
  for (const { endpoint, latencyMs } of deliveries) {
    const group = groupOfEndpoint.get(endpoint);
    if (group === undefined) continue;
    const latencies = byGroup.get(group) ?? [];
    byGroup.set(group, latencies);
    latencies.push(latencyMs);
  }
  if (byGroup.size < 2) return null;
  const p99s = [...byGroup].map(([group, latencies]) => ({
    group,
    p99: percentile(Float64Array.from(latencies).sort(), 99),
  }));
  p99s.sort((a, b) => a.p99 - b.p99);
  const worst = p99s[p99s.length - 1];
  return {
    groups: p99s.length,
    medianP99: percentile(
      p99s.map((p) => p.p99),
      50,
    ),
    worstP99: worst.p99,
    worstGroup: worst.group,
  };
}
