import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { HostIdentityGrant, newId, Plan, PortalSettings } from '@hookbase/domain';
import { OrganizationEntity } from '../entities';
import { Page, toPage } from './page';

@Injectable()
export class OrganizationRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(OrganizationEntity);
  }

  async create(input: {
    name: string;
    plan: Plan;
    hostCloudIdentity?: HostIdentityGrant | null;
    autoDisableAfterMs?: number | null;
  }): Promise<OrganizationEntity> {
    const now = new Date();
    return this.repo.save(
      this.repo.create({
        id: newId('org'),
        ...input,
        hostCloudIdentity: input.hostCloudIdentity ?? null,
        autoDisableAfterMs: input.autoDisableAfterMs ?? null,
        portal: null,
        createdAt: now,
        updatedAt: now,
      }),
    );
  }

  /** The organization's portal settings: null when none or unknown. */
  async portalSettings(id: string): Promise<PortalSettings | null> {
    const rows: { portal: PortalSettings | null }[] = await this.dataSource.query(
      'SELECT portal FROM organizations WHERE id = $1',
      [id],
    );
    return rows[0]?.portal ?? null;
  }

  /** The organization's opt-in to the host's cloud identity: null when off or unknown. */
  async hostCloudIdentity(id: string): Promise<HostIdentityGrant | null> {
    const rows: { host_cloud_identity: HostIdentityGrant | null }[] = await this.dataSource.query(
      'SELECT host_cloud_identity FROM organizations WHERE id = $1',
      [id],
    );
    return rows[0]?.host_cloud_identity ?? null;
  }

  /** Every organization of the installation, newest first, a page at a time (by id). */
  async list(options: { limit: number; cursor?: string }): Promise<Page<OrganizationEntity>> {
    const query = this.repo
      .createQueryBuilder('o')
      .orderBy('o.id', 'DESC')
      .take(options.limit + 1);
    if (options.cursor) query.where('o.id < :cursor', { cursor: options.cursor });
    return toPage(await query.getMany(), options.limit);
  }

  findById(id: string): Promise<OrganizationEntity | null> {
    return this.repo.findOneBy({ id });
  }

  /** Which of these ids name an organization (one query for a whole batch). */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: { id: string }[] = await this.dataSource.query(
      'SELECT id FROM organizations WHERE id = ANY($1)',
      [ids],
    );
    return new Set(rows.map((row) => row.id));
  }

  async update(
    organization: OrganizationEntity,
    patch: {
      name?: string;
      plan?: Plan;
      hostCloudIdentity?: HostIdentityGrant | null;
      autoDisableAfterMs?: number | null;
      portal?: PortalSettings | null;
    },
  ): Promise<OrganizationEntity> {
    Object.assign(organization, patch, { updatedAt: new Date() });
    return this.repo.save(organization);
  }
}
