import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { RetentionRepository } from '@hookbase/persistence';

/**
 * Prunes the message log by each organization's plan every HOOKBASE_RETENTION_INTERVAL_MS. Every
 * dispatcher runs it; a lock in PostgreSQL lets one at a time do the work.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetentionService.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly retention: RetentionRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.pruneOnce().finally(() => (this.running = undefined));
    }, this.config.retention.intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  async pruneOnce(): Promise<void> {
    try {
      const counts = await this.retention.prune(this.config.retention.days);
      if (counts && Object.values(counts).some((n) => n > 0)) {
        this.logger.log(`pruned ${JSON.stringify(counts)}`);
      }
    } catch (error) {
      // Nothing is lost by a pass that fails: the next one prunes the same rows.
      this.logger.error(`retention pass failed: ${(error as Error).message}`);
    }
  }
}
