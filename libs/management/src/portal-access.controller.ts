import {
  Body,
  Controller,
  Delete,
  HttpCode,
  Inject,
  Param,
  Post,
  Req,
  UseGuards,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { parseInput, portalAccessSchema, portalUrl } from '@hookbase/domain';
import { AuthService } from '@hookbase/auth';
import { PortalTokenRepository } from '@hookbase/persistence';
import { ApiKeyOrAdminGuard, dataOf, DescribeRoute, OrganizationId } from '@hookbase/web';
import { ApplicationsService } from './applications.service';

/**
 * Portal access: short-lived tokens scoped to one application, handed to the producer's customer
 * as a link to the dashboard's portal mode. The API key of the organization or the admin token.
 */
@Controller('api/organizations/:orgId/applications/:appId/portal-access')
@UseGuards(ApiKeyOrAdminGuard)
export class PortalAccessController {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly tokens: PortalTokenRepository,
    private readonly auth: AuthService,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {}

  /** 201 with the token, shown once; the link carries it in its fragment. */
  @DescribeRoute({
    operationId: 'createPortalAccess',
    tag: 'Applications',
    summary:
      "A portal token for the application (one hour unless `expiresInSeconds`, at most seven days; `readOnly` to only look) and the dashboard link that opens its portal, the token in the link's fragment.",
    security: 'apiKey',
    body: { name: 'PortalAccess', schema: portalAccessSchema, required: false },
    success: {
      status: 201,
      description: 'The token (shown once) and the portal link',
      schema: dataOf({
        type: 'object',
        required: ['url', 'token', 'expiresAt'],
        properties: {
          url: { type: 'string' },
          token: { type: 'string' },
          expiresAt: { type: 'string' },
          readOnly: { type: 'boolean' },
        },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'APPLICATION_NOT_FOUND', 'VALIDATION_FAILED'],
    usesStore: true,
  })
  @Post()
  @HttpCode(201)
  async create(
    @OrganizationId() organizationId: string,
    @Param('appId') appId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
  ) {
    const input = parseInput(portalAccessSchema, body ?? {});
    const application = await this.applications.require(organizationId, appId);
    const expiresAt = new Date(Date.now() + input.expiresInSeconds * 1000);
    const { token } = await this.tokens.issue({
      organizationId,
      applicationId: application.id,
      readOnly: input.readOnly,
      expiresAt,
    });
    const base = this.config.http.publicUrl ?? `${request.protocol}://${request.host}`;
    return {
      data: {
        url: portalUrl(base, organizationId, token),
        token,
        expiresAt: expiresAt.toISOString(),
        readOnly: input.readOnly,
      },
    };
  }

  @DescribeRoute({
    operationId: 'revokePortalAccess',
    tag: 'Applications',
    summary:
      'Revoke every portal token of the application: refused at once by the process that revoked them, by every other within HOOKBASE_API_KEY_CACHE_MS.',
    security: 'apiKey',
    success: {
      status: 200,
      description: 'Revoked',
      schema: dataOf({
        type: 'object',
        required: ['applicationId', 'revoked'],
        properties: {
          applicationId: { type: 'string' },
          revoked: { type: 'integer', minimum: 0 },
        },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Delete()
  async revoke(@OrganizationId() organizationId: string, @Param('appId') appId: string) {
    const application = await this.applications.require(organizationId, appId);
    const revoked = await this.tokens.revokeAll(organizationId, application.id);
    this.auth.forgetPortalAccess(application.id);
    return { data: { applicationId: application.id, revoked } };
  }
}
