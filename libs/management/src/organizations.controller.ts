import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import {
  createApiKeySchema,
  createOrganizationSchema,
  DomainError,
  listQuerySchema,
  parseInput,
  rotateApiKeySchema,
  updateOrganizationSchema,
} from '@hookbase/domain';
import {
  apiKeyBody,
  dataOf,
  DescribeRoute,
  issuedApiKeyBody,
  JsonSchema,
  pageOf,
} from '@hookbase/web';
import { ApiKeyRepository, OrganizationRepository } from '@hookbase/persistence';
import { AuthService } from '@hookbase/auth';
import { AdminGuard, AdminOnlyGuard, ApiKeyGuard } from '@hookbase/web';
import { apiKeyView, issuedApiKeyView, organizationView } from './views';

@Controller('api/organizations')
export class OrganizationsController {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly apiKeys: ApiKeyRepository,
    private readonly auth: AuthService,
  ) {}

  @DescribeRoute({
    operationId: 'createOrganization',
    tag: 'Organizations',
    summary:
      "Create an organization (admin). `hostCloudIdentity` (default null, off) lets its cloud endpoints without credentials use the Hookbase host's cloud identity, for the listed AWS accounts, AWS regions and Google projects when lists are given.",
    security: 'admin',
    body: { name: 'CreateOrganization', schema: createOrganizationSchema, required: true },
    success: { status: 201, description: 'The organization', schema: dataOf() },
    errors: [],
    usesStore: true,
  })
  @Post()
  @HttpCode(201)
  @UseGuards(AdminGuard)
  async create(@Body() body: unknown) {
    const input = parseInput(createOrganizationSchema, body);
    return { data: organizationView(await this.organizations.create(input)) };
  }

  @DescribeRoute({
    operationId: 'listOrganizations',
    tag: 'Organizations',
    summary:
      'Every organization of the installation, newest first (admin token only: an API key gets 403 FORBIDDEN).',
    security: 'admin',
    query: { name: 'ListQuery', schema: listQuerySchema },
    success: { status: 200, description: 'A page of organizations', schema: pageOf() },
    errors: ['FORBIDDEN', 'VALIDATION_FAILED'],
    usesStore: true,
  })
  @Get()
  @UseGuards(AdminOnlyGuard)
  async list(@Query() query: unknown) {
    const { limit, cursor } = parseInput(listQuerySchema, query);
    const page = await this.organizations.list({ limit, cursor });
    return { data: page.items.map(organizationView), nextCursor: page.nextCursor };
  }

  @DescribeRoute({
    operationId: 'getOrganization',
    tag: 'Organizations',
    summary: "The API key's own organization.",
    security: 'apiKey',
    success: { status: 200, description: 'The organization', schema: dataOf() },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  })
  @Get(':orgId')
  @UseGuards(ApiKeyGuard)
  async get(@Param('orgId') orgId: string) {
    return { data: organizationView(await this.require(orgId)) };
  }

  @DescribeRoute({
    operationId: 'updateOrganization',
    tag: 'Organizations',
    summary:
      "Change an organization's name, plan, `hostCloudIdentity` (admin; null turns the host identity off) or `portal` branding (`displayName`, `logoUrl`, `primaryColor`, and `allowedOrigins` that may embed the portal; null clears it).",
    security: 'admin',
    body: { name: 'UpdateOrganization', schema: updateOrganizationSchema, required: true },
    success: { status: 200, description: 'The organization', schema: dataOf() },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  })
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
  @DescribeRoute({
    operationId: 'createApiKey',
    tag: 'API keys',
    summary:
      'Create an API key (admin), with an optional name and expiry. The key is shown in this answer only; its hash is stored.',
    security: 'admin',
    body: { name: 'CreateApiKey', schema: createApiKeySchema, required: false },
    success: { status: 201, description: 'The new key', schema: dataOf(issuedApiKeyBody) },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  })
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
  @DescribeRoute({
    operationId: 'listApiKeys',
    tag: 'API keys',
    summary:
      "The organization's API keys, newest first (admin): prefix and metadata, never the key.",
    security: 'admin',
    success: {
      status: 200,
      description: 'The keys',
      schema: dataOf({ type: 'array', items: apiKeyBody }),
    },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  })
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
  @DescribeRoute({
    operationId: 'revokeApiKey',
    tag: 'API keys',
    summary:
      'Revoke an API key (admin): refused at once by the process that revoked it, by every other within HOOKBASE_API_KEY_CACHE_MS.',
    security: 'admin',
    success: { status: 200, description: 'The revoked key', schema: dataOf(apiKeyBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'API_KEY_NOT_FOUND'],
    usesStore: true,
  })
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
  @DescribeRoute({
    operationId: 'rotateApiKey',
    tag: 'API keys',
    summary:
      'Replace an API key by a new one with the same name and expiry (admin); the old one is revoked at once, or expires after `overlapSeconds`.',
    security: 'admin',
    body: { name: 'RotateApiKey', schema: rotateApiKeySchema, required: false },
    success: {
      status: 200,
      description: 'The new key, and the old one as it now is',
      schema: dataOf({
        ...issuedApiKeyBody,
        required: [...(issuedApiKeyBody.required as string[]), 'previous'],
        properties: { ...(issuedApiKeyBody.properties as JsonSchema), previous: apiKeyBody },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'API_KEY_NOT_FOUND', 'API_KEY_REVOKED'],
    usesStore: true,
  })
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
