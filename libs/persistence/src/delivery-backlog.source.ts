import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EndpointStatus, laneActivity } from '@hookbase/domain';
import { HookbaseMetrics, ScrapeSource } from '@hookbase/runtime';

/** A due retry not picked up for this long is overdue: the scheduler is behind or not running. */
export const RETRY_OVERDUE_AFTER_SECONDS = 60;

/**
 * The installation's delivery backlog at each scrape, from PostgreSQL: the retry schedule's due
 * and overdue messages, as the scheduler's claim sees them (its due index: a due retry, or a
 * claim whose lease ran out) and the FIFO lanes by state with
 * the oldest queued message's age (through the lane index).
 */
@Injectable()
export class DeliveryBacklogSource implements ScrapeSource, OnModuleInit {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Optional() private readonly metrics?: HookbaseMetrics,
  ) {}

  onModuleInit(): void {
    this.metrics?.addScrapeSource(this);
  }

  async collect(metrics: HookbaseMetrics): Promise<void> {
    const [retries, lanes] = await Promise.all([this.retrySchedule(), this.fifoLanes()]);
    metrics.retriesScheduled.set({ state: 'due' }, retries.due);
    metrics.retriesScheduled.set({ state: 'overdue' }, retries.overdue);
    const counts = new Map<string, { state: string; reason: string; lanes: number }>();
    let oldest: Date | null = null;
    for (const lane of lanes) {
      const activity = laneActivity({
        endpointStatus: lane.endpoint_status,
        inFlight: lane.in_flight,
        awaitingRetry: lane.awaiting_retry,
        circuitOpen: lane.circuit_open,
      });
      const reason = activity.state === 'blocked' ? activity.reason : '';
      const key = `${activity.state}/${reason}`;
      const entry = counts.get(key) ?? { state: activity.state, reason, lanes: 0 };
      entry.lanes++;
      counts.set(key, entry);
      if (oldest === null || lane.oldest < oldest) oldest = lane.oldest;
    }
    for (const state of ['running', 'retrying', 'queued']) {
      metrics.fifoLanes.set({ state, reason: '' }, 0);
    }
    for (const { state, reason, lanes: count } of counts.values()) {
      metrics.fifoLanes.set({ state, reason }, count);
    }
    metrics.fifoOldestQueuedAgeSeconds.set(
      oldest === null ? 0 : Math.max(0, (Date.now() - oldest.getTime()) / 1000),
    );
  }

  private async retrySchedule(): Promise<{ due: number; overdue: number }> {
    const [row] = (await this.dataSource.query(
      `SELECT count(*)::int AS due,
              count(*) FILTER (WHERE COALESCE(claim_until, next_attempt_at)
                                     <= now() - make_interval(secs => $1))::int AS overdue
         FROM messages
        WHERE route = 'schedule' AND COALESCE(claim_until, next_attempt_at) <= now()`,
      [RETRY_OVERDUE_AFTER_SECONDS],
    )) as { due: number; overdue: number }[];
    return row;
  }

  private async fifoLanes(): Promise<
    {
      endpoint_status: EndpointStatus;
      in_flight: boolean;
      awaiting_retry: boolean;
      circuit_open: boolean;
      oldest: Date;
    }[]
  > {
    return this.dataSource.query(
      `SELECT e.status AS endpoint_status,
              bool_or(m.status = 'in_flight') AS in_flight,
              bool_or(m.status = 'awaiting_retry') AS awaiting_retry,
              COALESCE(bool_or(l.blocked_reason = 'circuit_open' AND l.blocked_until > now()),
                       false) AS circuit_open,
              min(m.created_at) AS oldest
         FROM messages m
         JOIN endpoints e ON e.id = m.endpoint_id
         LEFT JOIN fifo_lanes l ON l.endpoint_id = m.endpoint_id
        WHERE m.route = 'lane'
        GROUP BY m.endpoint_id, e.status`,
    );
  }
}
