import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { DomainError, isApplicationId, newId } from '@hookbase/domain';
import { ApplicationEntity } from '../entities';
import { Page, toPage } from './page';

/** PostgreSQL's unique_violation: here only the (organization, uid) index can raise it. */
const UNIQUE_VIOLATION = '23505';

function uidTaken(error: unknown, uid: string | null): never {
  const code = (error as { driverError?: { code?: string } }).driverError?.code;
  if (code === UNIQUE_VIOLATION) {
    throw new DomainError(
      'APPLICATION_UID_TAKEN',
      `Another application of this organization has uid "${uid}"`,
    );
  }
  throw error;
}

/** Applications of organizations: their producer-given uid, name and metadata. */
@Injectable()
export class ApplicationRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(ApplicationEntity);
  }

  async create(input: {
    organizationId: string;
    uid: string | null;
    name: string;
    metadata: Record<string, unknown>;
    retentionDays: number | null;
  }): Promise<ApplicationEntity> {
    const now = new Date();
    const application = this.repo.create({
      ...input,
      id: newId('app', now.getTime()),
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.repo.insert(application as QueryDeepPartialEntity<ApplicationEntity>);
    } catch (error) {
      uidTaken(error, input.uid);
    }
    return application;
  }

  /** Oldest first, by id; with `uidPrefix` only those whose uid starts with it. */
  async list(
    organizationId: string,
    filter: { uidPrefix?: string },
    options: { limit: number; cursor?: string },
  ): Promise<Page<ApplicationEntity>> {
    const query = this.repo
      .createQueryBuilder('a')
      .where('a.organization_id = :organizationId', { organizationId })
      .orderBy('a.id', 'ASC')
      .take(options.limit + 1);
    if (filter.uidPrefix !== undefined)
      query.andWhere('starts_with(a.uid, :uidPrefix)', { uidPrefix: filter.uidPrefix });
    if (options.cursor) query.andWhere('a.id > :cursor', { cursor: options.cursor });
    return toPage(await query.getMany(), options.limit);
  }

  /** The application a reference names in the organization: an `app_` id, else a uid. */
  find(organizationId: string, reference: string): Promise<ApplicationEntity | null> {
    return isApplicationId(reference)
      ? this.repo.findOneBy({ organizationId, id: reference })
      : this.repo.findOneBy({ organizationId, uid: reference });
  }

  /** The applications that references name, per organization, in one query. */
  async findMany(
    references: readonly { organizationId: string; reference: string }[],
  ): Promise<{ id: string; organizationId: string; uid: string | null }[]> {
    if (references.length === 0) return [];
    const rows: { id: string; organization_id: string; uid: string | null }[] =
      await this.dataSource.query(
        `SELECT a.id, a.organization_id, a.uid
           FROM applications a
           JOIN unnest($1::text[], $2::text[]) AS r(organization_id, reference)
             ON a.organization_id = r.organization_id AND (a.id = r.reference OR a.uid = r.reference)`,
        [references.map((r) => r.organizationId), references.map((r) => r.reference)],
      );
    return rows.map((row) => ({ id: row.id, organizationId: row.organization_id, uid: row.uid }));
  }

  async save(application: ApplicationEntity): Promise<ApplicationEntity> {
    application.updatedAt = new Date();
    try {
      return await this.repo.save(application);
    } catch (error) {
      uidTaken(error, application.uid);
    }
  }

  /**
   * The application that owns an endpoint, a message, a DLQ entry or an event of the organization
   * (messages and DLQ entries through their endpoint: an endpoint never changes application; an
   * event by the application it was published for), or that an application reference (id or uid)
   * names: its id, null for the organization's own, undefined when there is no such thing.
   */
  async ownerOf(
    organizationId: string,
    kind: 'endpoint' | 'message' | 'dlq' | 'event' | 'application',
    id: string,
  ): Promise<string | null | undefined> {
    if (kind === 'application') return (await this.find(organizationId, id))?.id;
    const rows: { application_id: string | null }[] = await this.dataSource.query(
      kind === 'endpoint' || kind === 'event'
        ? `SELECT application_id FROM ${kind === 'endpoint' ? 'endpoints' : 'events'}
            WHERE id = $1 AND organization_id = $2`
        : `SELECT e.application_id FROM ${kind === 'message' ? 'messages' : 'dlq_entries'} t
             JOIN endpoints e ON e.id = t.endpoint_id
            WHERE t.id = $1 AND t.organization_id = $2`,
      [id, organizationId],
    );
    return rows.length === 0 ? undefined : rows[0].application_id;
  }

  async delete(application: ApplicationEntity): Promise<void> {
    await this.repo.delete({ id: application.id, organizationId: application.organizationId });
  }
}
