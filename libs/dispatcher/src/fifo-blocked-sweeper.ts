import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { blockedEpisodeSteps, laneBlockage, LaneBlockedReason } from '@hookbase/domain';
import { OperationalEventPublisher } from '@hookbase/kafka';
import { FifoEpisodeRepository, SweptLaneRow } from '@hookbase/persistence';
import { DataSource, EntityManager } from 'typeorm';

/** Lanes read per page of a sweep. */
const PAGE = 500;

/**
 * Finds blocked FIFO queues and tells their organization (`fifo.queue.blocked` once an episode
 * has lasted HOOKBASE_OPERATIONAL_FIFO_BLOCKED_AFTER, `fifo.queue.unblocked` when it ends), every
 * HOOKBASE_FIFO_BLOCKED_SWEEP_MS. It looks at the lanes in PostgreSQL, not at the attempts, so a
 * queue held by a paused or disabled endpoint, an open circuit or a stopped worker is seen as
 * well as a head that keeps failing, and an episode outlives a restart. Every dispatcher sweeps;
 * the episode's conditional writes (FifoEpisodeRepository) let one of them report each.
 */
@Injectable()
export class FifoBlockedSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FifoBlockedSweeper.name);
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly episodes: FifoEpisodeRepository,
    private readonly dataSource: DataSource,
    @Optional() private readonly operational?: OperationalEventPublisher,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.operational) return;
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep()
        .catch((error: Error) => this.logger.warn(`FIFO blocked sweep failed: ${error.message}`))
        .finally(() => (this.sweeping = undefined));
    }, this.config.delivery.fifoBlockedSweepMs);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One sweep over every lane with queued messages or an open episode. */
  async sweep(): Promise<void> {
    for (let after = ''; ;) {
      const lanes = await this.episodes.lanes(after, PAGE);
      for (const lane of lanes) {
        if (lane.operational) continue;
        await this.judge(lane).catch((error: Error) =>
          this.logger.warn(`FIFO lane ${lane.endpointId}: ${error.message}`),
        );
      }
      if (lanes.length < PAGE) return;
      after = lanes[lanes.length - 1].endpointId;
    }
  }

  private async judge(lane: SweptLaneRow): Promise<void> {
    const now = new Date();
    const thresholdMs = this.config.delivery.fifoBlockedEventAfterMs;
    const observed = laneBlockage(lane, this.config.fifo.leaseMs, now);
    const steps = blockedEpisodeSteps({ stored: lane.episode, observed, now, thresholdMs });
    for (const step of steps) {
      switch (step.action) {
        // An episode's end or report and its event commit together (the event in the outbox).
        case 'end':
          await this.dataSource.transaction(async (manager) => {
            const ended = await this.episodes.end(lane.endpointId, step.headId, manager);
            if (ended?.reportedAt) await this.unblocked(lane, step.headId, ended.since, manager);
          });
          break;
        case 'start':
          await this.episodes.start(lane.endpointId, step.headId);
          break;
        case 'report':
          await this.dataSource.transaction(async (manager) => {
            const since = await this.episodes.report(
              lane.endpointId,
              step.headId,
              thresholdMs,
              manager,
            );
            if (since) await this.blocked(lane, step.reason, since, manager);
          });
          break;
        default: {
          const unreachable: never = step;
          throw new Error(`unknown episode step ${JSON.stringify(unreachable)}`);
        }
      }
    }
  }

  private async blocked(
    lane: SweptLaneRow,
    reason: LaneBlockedReason,
    since: Date,
    manager: EntityManager,
  ) {
    const head = lane.head!;
    const data = {
      state: {
        blockedReason: reason,
        blockedSince: since.toISOString(),
        head: {
          messageId: head.messageId,
          eventType: head.eventType,
          attempts: head.attempts,
          nextAttemptAt: head.nextAttemptAt?.toISOString() ?? null,
        },
      },
    };
    await this.operational!.emitAll(
      'fifo.queue.blocked',
      [{ subject: subjectOf(lane), data }],
      new Date(),
      manager,
    );
  }

  private async unblocked(lane: SweptLaneRow, headId: string, since: Date, manager: EntityManager) {
    const data = { messageId: headId, blockedSince: since.toISOString() };
    await this.operational!.emitAll(
      'fifo.queue.unblocked',
      [{ subject: subjectOf(lane), data }],
      new Date(),
      manager,
    );
  }
}

function subjectOf(lane: SweptLaneRow) {
  return { id: lane.endpointId, organizationId: lane.organizationId, operational: false };
}
