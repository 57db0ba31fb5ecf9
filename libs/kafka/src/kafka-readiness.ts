import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Admin, Kafka } from 'kafkajs';
import { ProbesReadiness, ReadinessProbe } from '@hookbase/runtime';
import { KAFKA } from './kafka.tokens';

/**
 * Ready when a Kafka broker answers a metadata request. The producers and consumers of the
 * process reach Kafka through the same brokers, so this is the quick sign that they can; each
 * consumer reports its group membership on its own (TopicWorker).
 */
@ProbesReadiness()
@Injectable()
export class KafkaReadiness implements ReadinessProbe, OnApplicationShutdown {
  readonly readinessName = 'kafka';
  private admin: Admin | undefined;

  constructor(@Inject(KAFKA) private readonly kafka: Kafka) {}

  async checkReadiness(): Promise<string | undefined> {
    try {
      if (!this.admin) {
        // No retries: a probe answers now; the orchestrator asks again.
        this.admin = this.kafka.admin({ retry: { retries: 0 } });
        await this.admin.connect();
      }
      const cluster = await this.admin.describeCluster();
      return cluster.brokers.length === 0 ? 'no broker in the cluster metadata' : undefined;
    } catch (error) {
      // A fresh client next time, rather than one left in an unknown state.
      const admin = this.admin;
      this.admin = undefined;
      await admin?.disconnect().catch(() => undefined);
      return `broker unreachable (${(error as Error).message})`;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
  }
}
