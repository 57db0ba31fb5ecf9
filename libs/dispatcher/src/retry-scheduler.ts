import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { MessageRepository } from '@hookbase/persistence';
import { Drainable, DrainsOnShutdown, settledBy } from '@hookbase/runtime';
import { DeliveryService } from './delivery.service';

const CLAIM_BATCH = 200;
/**
 * Claims under way at once: the next is taken while the last one's attempts finish, so that the
 * dispatch pool does not run dry at the end of each claim (the slowest attempt of a claim held up
 * the next one, and a backlog drained at half the pace the process allowed).
 */
const CLAIMS_UNDER_WAY = 2;
/**
 * A claim reads its events' payloads while they come to at most this part of the read-ahead's
 * payload budget (HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES): the claims under way hold at most
 * half of it. The others are read when their attempts are about to start.
 */
const CLAIM_PAYLOAD_PART = 1 / 4;

/**
 * The retry path, off the partitions' critical path: messages waiting for a later attempt (or
 * held while their endpoint is paused) live in PostgreSQL with their due time; this loop claims
 * due ones under a lease and delivers them, at most CLAIMS_UNDER_WAY claims at once, each event's
 * payload read once for a claim and within CLAIM_PAYLOAD_PART of the payload budget. A claim whose
 * worker died is claimed again once its lease has passed, so retries survive restarts.
 */
@Injectable()
@DrainsOnShutdown()
export class RetryScheduler implements OnApplicationBootstrap, OnApplicationShutdown, Drainable {
  private readonly logger = new Logger(RetryScheduler.name);
  readonly drainName = 'retry schedule';
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly messages: MessageRepository,
    private readonly delivery: DeliveryService,
  ) {}

  onApplicationBootstrap(): void {
    this.running = true;
    this.loop = this.run();
  }

  /**
   * Claims nothing more and lets the pass under way finish until the deadline; claims it has not
   * finished by then stay leased and are claimed again after their lease.
   */
  async drain(deadline: number): Promise<void> {
    this.running = false;
    this.wake?.();
    if (this.loop && !(await settledBy(this.loop, deadline))) {
      this.logger.warn('retry pass still under way at the drain deadline: left to its lease');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  private get leaseMs(): number {
    return 2 * this.config.delivery.timeoutMs + 30_000;
  }

  private async run(): Promise<void> {
    const underWay = new Set<Promise<void>>();
    while (this.running) {
      let claimed = 0;
      try {
        const { messages: due } = await this.messages.claimForRetry(
          CLAIM_BATCH,
          this.leaseMs,
          Math.floor(this.config.delivery.readAheadPayloadBytes * CLAIM_PAYLOAD_PART),
        );
        claimed = due.length;
        if (claimed > 0) {
          const pass = this.delivery
            .deliver(
              due.map((message) => ({
                ...message,
                attemptsMade: message.attempts,
                source: 'scheduled' as const,
              })),
            )
            // Claims stay leased and are taken again after the lease: nothing is lost.
            .catch((error: Error) => this.logger.error(`retry pass failed: ${error.message}`))
            .finally(() => underWay.delete(pass));
          underWay.add(pass);
        }
      } catch (error) {
        this.logger.error(`retry claim failed: ${(error as Error).message}`);
      }
      if (underWay.size >= CLAIMS_UNDER_WAY) await Promise.race(underWay);
      if (claimed < CLAIM_BATCH) await this.pause(this.config.delivery.retryPollMs);
    }
    // A drain or a shutdown waits for the attempts of the claims under way.
    await Promise.all(underWay);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
