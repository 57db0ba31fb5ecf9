import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { newId, Plan } from '@hookbase/domain';
import { OrganizationEntity } from '../entities';

@Injectable()
export class OrganizationRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(OrganizationEntity);
  }

  async create(input: { name: string; plan: Plan }): Promise<OrganizationEntity> {
    const now = new Date();
    return this.repo.save(
      this.repo.create({ id: newId('org'), ...input, createdAt: now, updatedAt: now }),
    );
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
    patch: { name?: string; plan?: Plan },
  ): Promise<OrganizationEntity> {
    Object.assign(organization, patch, { updatedAt: new Date() });
    return this.repo.save(organization);
  }
}
