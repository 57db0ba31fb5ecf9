import { Body, Controller, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import {
  createOrganizationSchema,
  DomainError,
  parseInput,
  updateOrganizationSchema,
} from '@hookbase/domain';
import { ApiKeyRepository, OrganizationRepository } from '@hookbase/persistence';
import { AdminGuard, ApiKeyGuard } from '@hookbase/web';
import { organizationView } from './views';

@Controller('api/organizations')
export class OrganizationsController {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly apiKeys: ApiKeyRepository,
  ) {}

  @Post()
  @HttpCode(201)
  @UseGuards(AdminGuard)
  async create(@Body() body: unknown) {
    const input = parseInput(createOrganizationSchema, body);
    return { data: organizationView(await this.organizations.create(input)) };
  }

  @Get(':orgId')
  @UseGuards(ApiKeyGuard)
  async get(@Param('orgId') orgId: string) {
    return { data: organizationView(await this.require(orgId)) };
  }

  @Patch(':orgId')
  @UseGuards(AdminGuard)
  async update(@Param('orgId') orgId: string, @Body() body: unknown) {
    const input = parseInput(updateOrganizationSchema, body);
    const organization = await this.require(orgId);
    return { data: organizationView(await this.organizations.update(organization, input)) };
  }

  /** The key is in the answer once and never again: only its hash is stored. */
  @Post(':orgId/api-keys')
  @HttpCode(201)
  @UseGuards(AdminGuard)
  async createKey(@Param('orgId') orgId: string) {
    await this.require(orgId);
    return { data: await this.apiKeys.create(orgId) };
  }

  private async require(orgId: string) {
    const organization = await this.organizations.findById(orgId);
    if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
    return organization;
  }
}
