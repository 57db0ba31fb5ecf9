import { Inject, Injectable, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { Admin, Kafka } from 'kafkajs';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { partitionLag } from '@hookbase/domain';
import { HookbaseMetrics, ScrapeSource } from '@hookbase/runtime';
import { KAFKA, TOPICS } from './kafka.tokens';
import { consumerGroup, TopicNames } from './topics';

/**
 * Measures, at each scrape, the lag of every consumer group of the installation on its topic
 * (`hookbase_consumer_lag`), and each topic's partition count (`hookbase_topic_partitions`). Every
 * process reports all groups, so lag is seen even while no member of a group runs (a stopped
 * dispatcher); aggregate with `max` across processes.
 */
@Injectable()
export class ConsumerLagSource implements ScrapeSource, OnModuleInit, OnApplicationShutdown {
  private admin: Admin | undefined;
  private readonly groups: { group: string; topic: string }[];

  constructor(
    @Inject(KAFKA) private readonly kafka: Kafka,
    @Inject(TOPICS) topics: TopicNames,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    @Optional() private readonly metrics?: HookbaseMetrics,
  ) {
    const prefix = config.kafka.topicPrefix;
    this.groups = [
      { group: consumerGroup(prefix, 'fanout'), topic: topics.events },
      { group: consumerGroup(prefix, 'dispatcher'), topic: topics.deliveries },
      { group: consumerGroup(prefix, 'dlq-handler'), topic: topics.dlq },
    ];
  }

  onModuleInit(): void {
    this.metrics?.addScrapeSource(this);
  }

  async collect(metrics: HookbaseMetrics): Promise<void> {
    try {
      if (!this.admin) {
        this.admin = this.kafka.admin({ retry: { retries: 0 } });
        await this.admin.connect();
      }
      const admin = this.admin;
      await Promise.all(
        this.groups.map(async ({ group, topic }) => {
          const [ends, [committed]] = await Promise.all([
            admin.fetchTopicOffsets(topic),
            admin.fetchOffsets({ groupId: group, topics: [topic] }),
          ]);
          metrics.topicPartitions.set({ topic }, ends.length);
          const byPartition = new Map(committed.partitions.map((p) => [p.partition, p.offset]));
          for (const end of ends) {
            metrics.consumerLag.set(
              { group, topic, partition: String(end.partition) },
              partitionLag({
                high: end.high,
                low: end.low,
                committed: byPartition.get(end.partition) ?? '-1',
              }),
            );
          }
        }),
      );
    } catch (error) {
      const admin = this.admin;
      this.admin = undefined;
      await admin?.disconnect().catch(() => undefined);
      throw error;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
  }
}
