import { Injectable } from '@nestjs/common';
import { DataSource, LessThan } from 'typeorm';
import { newId } from '@hookbase/domain';
import { InvalidEventEntity } from '../entities';
import { Page, toPage } from './page';

export interface InvalidEventRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  valueExcerpt: string | null;
  reason: string;
}

@Injectable()
export class InvalidEventRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Keeps each position once: a batch read again after a crash adds nothing. */
  async record(records: readonly InvalidEventRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.dataSource.query(
      `INSERT INTO invalid_events (id, topic, partition, "offset", record_key, value_excerpt, reason, received_at)
       SELECT u.*, now() FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[], $5::text[], $6::text[], $7::text[])
              AS u(id, topic, partition, "offset", record_key, value_excerpt, reason)
       ON CONFLICT (topic, partition, "offset") DO NOTHING`,
      [
        records.map(() => newId('inv')),
        records.map((r) => r.topic),
        records.map((r) => r.partition),
        records.map((r) => r.offset),
        records.map((r) => r.key),
        records.map((r) => r.valueExcerpt),
        records.map((r) => r.reason),
      ],
    );
  }

  async list(options: { limit: number; cursor?: string }): Promise<Page<InvalidEventEntity>> {
    const rows = await this.dataSource.getRepository(InvalidEventEntity).find({
      where: options.cursor ? { id: LessThan(options.cursor) } : {},
      order: { id: 'DESC' },
      take: options.limit + 1,
    });
    return toPage(rows, options.limit);
  }

  count(): Promise<number> {
    return this.dataSource.getRepository(InvalidEventEntity).count();
  }
}
