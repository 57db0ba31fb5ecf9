import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Admin, Kafka } from 'kafkajs';
import { ProbesReadiness, ReadinessProbe } from '@hookbase/runtime';
import { KAFKA } from './kafka.tokens';

/**
 * Ready when a Kafka broker answers a metadata request. The producers and consumers of the
 * process reach Kafka through the same brokers, so this is the quick sign that they can; each
 * consumer reports its group membership on its own (TopicWorker). Probes that come while one is
 * under way share its answer: one client, one request at a time.
 */
@ProbesReadiness()
@Injectable()
export class KafkaReadiness implements ReadinessProbe, OnApplicationShutdown {
  readonly readinessName = 'kafka';
  private admin: Admin | undefined;
  private checking: Promise<string | undefined> | undefined;

  constructor(@Inject(KAFKA) private readonly kafka: Pick<Kafka, 'admin'>) {}

  checkReadiness(): Promise<string | undefined> {
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async check(): Promise<string | undefined> {
    let admin = this.admin;
    try {
      if (!admin) {
        // No retries: a probe answers now; the orchestrator asks again.
        admin = this.kafka.admin({ retry: { retries: 0 } });
        this.admin = admin;
        await admin.connect();
      }
      const cluster = await admin.describeCluster();
      return cluster.brokers.length === 0 ? 'no broker in the cluster metadata' : undefined;
    } catch (error) {
      // A fresh client next time, rather than one left in an unknown state.
      if (this.admin === admin) this.admin = undefined;
      await admin?.disconnect().catch(() => undefined);
      return `broker unreachable (${(error as Error).message})`;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.disconnect().catch(() => undefined);
  }
}
