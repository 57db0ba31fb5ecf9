import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { HookbaseMetrics, ScrapeSource } from '@hookbase/runtime';

/** What node-postgres's pool says of itself. */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** This process's PostgreSQL pool at each scrape: connections in use, idle, and queries waiting. */
@Injectable()
export class DatabasePoolSource implements ScrapeSource, OnModuleInit {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Optional() private readonly metrics?: HookbaseMetrics,
  ) {}

  onModuleInit(): void {
    this.metrics?.addScrapeSource(this);
  }

  async collect(metrics: HookbaseMetrics): Promise<void> {
    const pool = (this.dataSource.driver as unknown as { master?: PoolCounts }).master;
    if (!pool) return;
    metrics.dbPoolConnections.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
    metrics.dbPoolConnections.set({ state: 'idle' }, pool.idleCount);
    metrics.dbPoolWaiting.set(pool.waitingCount);
  }
}
