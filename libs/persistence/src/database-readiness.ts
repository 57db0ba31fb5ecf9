import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ProbesReadiness, ReadinessProbe } from '@hookbase/runtime';

/**
 * Ready when PostgreSQL answers a query and every migration this build knows is applied. Once seen
 * applied, migrations are not looked at again: they are never taken back while a process runs.
 */
@ProbesReadiness()
@Injectable()
export class DatabaseReadiness implements ReadinessProbe {
  readonly readinessName = 'postgresql';
  private migrationsApplied = false;

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async checkReadiness(): Promise<string | undefined> {
    if (!this.dataSource.isInitialized) return 'not connected';
    await this.dataSource.query('SELECT 1');
    if (!this.migrationsApplied) {
      if (await this.dataSource.showMigrations()) return 'migrations pending';
      this.migrationsApplied = true;
    }
    return undefined;
  }
}
