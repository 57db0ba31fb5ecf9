import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  UseGuards,
} from '@nestjs/common';
import {
  createApiKeySchema,
  createOrganizationSchema,
  DomainError,
  parseInput,
  rotateApiKeySchema,
  updateOrganizationSchema,
} from '@hookbase/domain';
import { ApiKeyRepository, OrganizationRepository } from '@hookbase/persistence';
import { AuthService } from '@hookbase/auth';
import { AdminGuard, ApiKeyGuard } from '@hookbase/web';
import { apiKeyView, issuedApiKeyView, organizationView } from './views';

@Controller('api/organizations')
export class OrganizationsController {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly apiKeys: ApiKeyRepository,
    private readonly auth: AuthService,
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
    const updated = await this.organizations.update(organization, input);
    // Limits follow the plan: this process reads it again at once, others within the cache time.
    this.auth.forgetOrganization(orgId);
    return { data: organizationView(updated) };
  }

  /** The key is in the answer once and never again: only its hash is stored. */
  @Post(':orgId/api-keys')
  @HttpCode(201)
  @UseGuards(AdminGuard)
  async createKey(@Param('orgId') orgId: string, @Body() body: unknown) {
    const input = parseInput(createApiKeySchema, body ?? {});
    const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
    if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      throw new DomainError('VALIDATION_FAILED', 'expiresAt must be in the future', {
        issues: [{ path: 'expiresAt', message: 'must be in the future' }],
      });
    }
    await this.require(orgId);
    return {
      data: issuedApiKeyView(await this.apiKeys.create(orgId, { name: input.name, expiresAt })),
    };
  }

  /** The organization's keys, newest first: prefix and metadata, never a key. */
  @Get(':orgId/api-keys')
  @UseGuards(AdminGuard)
  async listKeys(@Param('orgId') orgId: string) {
    await this.require(orgId);
    return { data: (await this.apiKeys.list(orgId)).map(apiKeyView) };
  }

  /**
   * Revokes a key: it stops working at once in this process and within HOOKBASE_API_KEY_CACHE_MS
   * in every other. Revoking a revoked key changes nothing.
   */
  @Delete(':orgId/api-keys/:keyId')
  @UseGuards(AdminGuard)
  async revokeKey(@Param('orgId') orgId: string, @Param('keyId') keyId: string) {
    await this.require(orgId);
    const key = await this.apiKeys.revoke(orgId, keyId);
    if (!key) throw new DomainError('API_KEY_NOT_FOUND', 'API key not found');
    this.auth.forgetKey(keyId);
    return { data: apiKeyView(key) };
  }

  /**
   * A new key with the same name and expiry; the old one is revoked at once, or after
   * `overlapSeconds` so clients can move over.
   */
  @Post(':orgId/api-keys/:keyId/rotate')
  @HttpCode(200)
  @UseGuards(AdminGuard)
  async rotateKey(
    @Param('orgId') orgId: string,
    @Param('keyId') keyId: string,
    @Body() body: unknown,
  ) {
    const { overlapSeconds } = parseInput(rotateApiKeySchema, body ?? {});
    await this.require(orgId);
    const rotated = await this.apiKeys.rotate(orgId, keyId, overlapSeconds);
    if (rotated === null) throw new DomainError('API_KEY_NOT_FOUND', 'API key not found');
    if (rotated === 'revoked') {
      throw new DomainError(
        'API_KEY_REVOKED',
        'This key is revoked or expired: create a new one instead of rotating it',
      );
    }
    // Its remembered expiry may have moved closer: read it again.
    this.auth.forgetKey(keyId);
    return { data: { ...issuedApiKeyView(rotated.issued), previous: apiKeyView(rotated.old) } };
  }

  private async require(orgId: string) {
    const organization = await this.organizations.findById(orgId);
    if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
    return organization;
  }
}
