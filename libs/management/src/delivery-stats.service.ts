import { Injectable } from '@nestjs/common';
import { ENDPOINT_STATS_MINUTES, minuteSeries } from '@hookbase/domain';
import { MessageRepository } from '@hookbase/persistence';
import { attemptView } from './views';

/**
 * The last hour of attempts of one endpoint or of an application's endpoints together: per
 * minute by outcome with median and longest latency, the success rate, and the latest attempts.
 */
@Injectable()
export class DeliveryStatsService {
  constructor(private readonly messages: MessageRepository) {}

  async lastHour(endpointIds: readonly string[], now = new Date()) {
    const from = new Date(
      Math.floor(now.getTime() / 60_000) * 60_000 - (ENDPOINT_STATS_MINUTES - 1) * 60_000,
    );
    const [rows, recent] =
      endpointIds.length === 0
        ? [[], []]
        : await Promise.all([
            this.messages.attemptMinutes(endpointIds, from),
            this.messages.recentAttempts(endpointIds, 20),
          ]);
    return {
      ...minuteSeries(rows, now),
      lastAttemptAt: recent[0]?.startedAt.toISOString() ?? null,
      recentAttempts: recent.map((attempt) => ({
        messageId: attempt.messageId,
        ...attemptView(attempt),
      })),
    };
  }
}
