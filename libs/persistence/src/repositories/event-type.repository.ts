import { Injectable } from '@nestjs/common';
import { DataSource, MoreThan } from 'typeorm';
import type { EventTypePolicy } from '@hookbase/domain';
import { EventTypeEntity } from '../entities';
import { Page } from './page';

/** The fields of a type that may be set on create or update. */
export interface EventTypeFields {
  description?: string;
  schema?: Record<string, unknown> | boolean | null;
  example?: Record<string, unknown> | null;
  deprecated?: boolean;
  archived?: boolean;
}

/** What ingest needs of an organization's catalog to admit its events. */
export interface CatalogSnapshot {
  policy: EventTypePolicy;
  /** Empty under the `open` policy: nothing of the catalog is read then. */
  types: { name: string; archived: boolean; version: number; schema: unknown }[];
}

@Injectable()
export class EventTypeRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(EventTypeEntity);
  }

  /** An organization's types by name, a page at a time. */
  async list(
    organizationId: string,
    options: { limit: number; cursor?: string },
  ): Promise<Page<EventTypeEntity>> {
    const rows = await this.repo.find({
      where: { organizationId, ...(options.cursor ? { name: MoreThan(options.cursor) } : {}) },
      order: { name: 'ASC' },
      take: options.limit + 1,
    });
    const items = rows.slice(0, options.limit);
    return {
      items,
      nextCursor: rows.length > options.limit ? items[items.length - 1].name : null,
    };
  }

  find(organizationId: string, name: string): Promise<EventTypeEntity | null> {
    return this.repo.findOneBy({ organizationId, name });
  }

  /** Inserts a new type; null when the organization already has one of this name. */
  async create(
    organizationId: string,
    name: string,
    fields: EventTypeFields,
  ): Promise<EventTypeEntity | null> {
    const now = new Date();
    const rows: { name: string }[] = await this.dataSource.query(
      `INSERT INTO event_types (organization_id, name, description, schema, example, deprecated,
         archived, version, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $8)
       ON CONFLICT (organization_id, name) DO NOTHING
       RETURNING name`,
      [
        organizationId,
        name,
        fields.description ?? '',
        jsonOrNull(fields.schema),
        jsonOrNull(fields.example),
        fields.deprecated ?? false,
        fields.archived ?? false,
        now,
      ],
    );
    return rows.length === 0 ? null : this.find(organizationId, name);
  }

  /** Changes a type and moves its version on (every process then recompiles its schema). */
  async update(entity: EventTypeEntity, fields: EventTypeFields): Promise<EventTypeEntity> {
    await this.dataSource.query(
      `UPDATE event_types SET description = $3, schema = $4, example = $5, deprecated = $6,
         archived = $7, version = version + 1, updated_at = $8
       WHERE organization_id = $1 AND name = $2`,
      [
        entity.organizationId,
        entity.name,
        fields.description ?? entity.description,
        jsonOrNull(fields.schema === undefined ? entity.schema : fields.schema),
        jsonOrNull(fields.example === undefined ? entity.example : fields.example),
        fields.deprecated ?? entity.deprecated,
        fields.archived ?? entity.archived,
        new Date(),
      ],
    );
    return (await this.find(entity.organizationId, entity.name)) ?? entity;
  }

  async delete(organizationId: string, name: string): Promise<boolean> {
    const result: [unknown[], number] = await this.dataSource.query(
      'DELETE FROM event_types WHERE organization_id = $1 AND name = $2',
      [organizationId, name],
    );
    return result[1] > 0;
  }

  /**
   * Each organization's policy and, unless it is `open`, its types (with schemas only under
   * `validated`), in one query for all of them; an organization that does not exist is left out.
   */
  async snapshots(organizationIds: readonly string[]): Promise<Map<string, CatalogSnapshot>> {
    const found = new Map<string, CatalogSnapshot>();
    if (organizationIds.length === 0) return found;
    const rows: {
      organization_id: string;
      policy: EventTypePolicy;
      name: string | null;
      archived: boolean | null;
      version: number | null;
      schema: unknown;
    }[] = await this.dataSource.query(
      `SELECT o.id AS organization_id, o.event_type_policy AS policy, t.name, t.archived, t.version,
         CASE WHEN o.event_type_policy = 'validated' THEN t.schema END AS schema
       FROM organizations o
       LEFT JOIN event_types t ON t.organization_id = o.id AND o.event_type_policy <> 'open'
       WHERE o.id = ANY($1)`,
      [[...new Set(organizationIds)]],
    );
    for (const row of rows) {
      let snapshot = found.get(row.organization_id);
      if (!snapshot) {
        snapshot = { policy: row.policy, types: [] };
        found.set(row.organization_id, snapshot);
      }
      if (row.name === null) continue;
      snapshot.types.push({
        name: row.name,
        archived: row.archived ?? false,
        version: row.version ?? 0,
        schema: row.schema ?? null,
      });
    }
    return found;
  }

  async setPolicy(organizationId: string, policy: EventTypePolicy): Promise<boolean> {
    const result: [unknown[], number] = await this.dataSource.query(
      'UPDATE organizations SET event_type_policy = $2, updated_at = now() WHERE id = $1',
      [organizationId, policy],
    );
    return result[1] > 0;
  }
}

/** A JSON value for a jsonb parameter (pg would send a JS array as a PostgreSQL array). */
function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
