import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { OperationalOutboxRepository } from '@hookbase/persistence';
import { operationalRecordHeaders } from './ingest-origin';
import { KafkaProducer } from './kafka-producer';
import { TOPICS } from './kafka.tokens';
import { TopicNames } from './topics';

/** Events moved per transaction. */
const BATCH = 500;

/**
 * Moves operational events from `operational_outbox` onto the events topic, oldest first: when
 * one is written here (nudged) and every HOOKBASE_OPERATIONAL_RELAY_MS. An event leaves the table
 * only once Kafka has acknowledged it, so an outage delays events and loses none; a crash between
 * the two sends one again, with the same event id (the fan-out records one message per event and
 * endpoint). Relays of several processes share the table, each taking rows no other holds.
 */
@Injectable()
export class OperationalOutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OperationalOutboxRelay.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private failing = false;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly outbox: OperationalOutboxRepository,
    private readonly producer: KafkaProducer,
    @Inject(TOPICS) private readonly topics: TopicNames,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.nudge(), this.config.delivery.operationalRelayMs);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    // What was written before the stop goes out now if Kafka takes it; otherwise it waits.
    this.nudge();
    await this.running;
    this.stopped = true;
  }

  /** Drains soon: now, or right after the drain under way. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.nudge();
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const moved = await this.outbox.drain(BATCH, (envelopes) =>
          this.producer.send(
            this.topics.events,
            envelopes.map((envelope) => ({
              key: envelope.organizationId,
              value: JSON.stringify(envelope),
              headers: operationalRecordHeaders(),
            })),
          ),
        );
        if (this.failing) {
          this.failing = false;
          this.logger.log('operational events flow again');
        }
        if (moved < BATCH) return;
      }
    } catch (error) {
      // Kept for the next try; said once per outage, not at every tick.
      if (!this.failing) {
        this.failing = true;
        this.logger.warn(
          `operational events wait in PostgreSQL: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }
}
