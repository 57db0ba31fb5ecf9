import { DomainError } from '@hookbase/domain';
import { IngestMetrics, IngestSurface } from '@hookbase/runtime';
import { BatchItemOutcome } from './publish-batch.use-case';

/** The reason label of a refused event: its error code (a closed set), INTERNAL otherwise. */
export function refusalReason(error: unknown): string {
  return error instanceof DomainError ? error.code : 'INTERNAL';
}

/** Counts one event as accepted or refused on `surface` by how `publish` ends. */
export async function countedPublish<T>(
  metrics: IngestMetrics,
  surface: IngestSurface,
  publish: () => Promise<T>,
): Promise<T> {
  try {
    const result = await publish();
    metrics.eventsAccepted(surface, 1);
    return result;
  } catch (error) {
    metrics.eventsRefused(surface, refusalReason(error), 1);
    throw error;
  }
}

/**
 * Counts a batch's events by their outcomes; a batch refused as a whole (its size, the key's
 * budget) counts each event it held, or one when it held no list.
 */
export async function countedBatch(
  metrics: IngestMetrics,
  surface: IngestSurface,
  events: unknown,
  publish: () => Promise<BatchItemOutcome[]>,
): Promise<BatchItemOutcome[]> {
  let outcomes: BatchItemOutcome[];
  try {
    outcomes = await publish();
  } catch (error) {
    const count = Array.isArray(events) && events.length > 0 ? events.length : 1;
    metrics.eventsRefused(surface, refusalReason(error), count);
    throw error;
  }
  const refused = new Map<string, number>();
  let accepted = 0;
  for (const outcome of outcomes) {
    if (outcome.kind === 'published') accepted++;
    else {
      const reason = refusalReason(outcome.error);
      refused.set(reason, (refused.get(reason) ?? 0) + 1);
    }
  }
  metrics.eventsAccepted(surface, accepted);
  for (const [reason, count] of refused) metrics.eventsRefused(surface, reason, count);
  return outcomes;
}
