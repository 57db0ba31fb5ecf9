import { Injectable, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { HookbaseMetrics, ScrapeSource } from '@hookbase/runtime';
import { TopicWorker } from './topic-worker';

/**
 * The partitions each consumer of this process holds in its group, at each scrape
 * (`hookbase_consumer_assigned_partitions{group,topic}`), from what its consumer client said at
 * the last group join. Summed over every process of the installation and compared with
 * `hookbase_topic_partitions`, it shows a partition that no consumer reads.
 */
@Injectable()
export class ConsumerAssignmentSource implements ScrapeSource, OnApplicationBootstrap {
  private workers: TopicWorker<unknown>[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    @Optional() private readonly metrics?: HookbaseMetrics,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.metrics) return;
    this.workers = this.discovery
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is TopicWorker<unknown> => instance instanceof TopicWorker);
    if (this.workers.length > 0) this.metrics.addScrapeSource(this);
  }

  async collect(metrics: HookbaseMetrics): Promise<void> {
    for (const worker of this.workers) {
      const { group, topic, partitions } = worker.assignment();
      metrics.consumerAssignedPartitions.set({ group, topic }, partitions);
    }
  }
}
