import { Controller, Get, UseGuards } from '@nestjs/common';
import { DomainError } from '@hookbase/domain';
import { ApplicationRepository, OrganizationRepository } from '@hookbase/persistence';
import type { ApiKeyPrincipal } from '@hookbase/auth';
import {
  ApiKeyGuard,
  AuthenticatedKey,
  dataOf,
  DescribeRoute,
  OrganizationId,
  PortalRoute,
} from '@hookbase/web';

/** What the dashboard's portal mode needs to start: whose portal it is, and how it looks. */
@Controller('api/portal')
@UseGuards(ApiKeyGuard)
@PortalRoute()
export class PortalSessionController {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly applications: ApplicationRepository,
  ) {}

  @DescribeRoute({
    operationId: 'getPortalSession',
    tag: 'Applications',
    summary:
      "A portal token's session: its organization and application, whether it is read-only, the plan, and the organization's portal branding. Only a portal token (404 for an API key).",
    security: 'apiKey',
    success: {
      status: 200,
      description: 'The portal session',
      schema: dataOf({
        type: 'object',
        required: ['organizationId', 'application', 'plan', 'readOnly', 'branding'],
        properties: {
          organizationId: { type: 'string' },
          application: { type: 'object' },
          plan: { type: 'string' },
          readOnly: { type: 'boolean' },
          branding: { type: 'object' },
        },
      }),
    },
    errors: ['NOT_FOUND'],
    usesStore: true,
  })
  @Get('session')
  async session(
    @OrganizationId() organizationId: string,
    @AuthenticatedKey() key: ApiKeyPrincipal,
  ) {
    if (!key.portal) throw new DomainError('NOT_FOUND', 'Only a portal token has a portal session');
    const scope = key.portal.applicationId;
    const [organization, application] = await Promise.all([
      this.organizations.findById(organizationId),
      this.applications.find(organizationId, scope),
    ]);
    if (!organization || !application) throw new DomainError('NOT_FOUND', 'Not found');
    const { displayName, logoUrl, primaryColor } = organization.portal ?? {};
    return {
      data: {
        organizationId,
        application: { id: application.id, uid: application.uid, name: application.name },
        plan: organization.plan,
        readOnly: key.portal.readOnly,
        branding: {
          displayName: displayName ?? organization.name,
          logoUrl: logoUrl ?? null,
          primaryColor: primaryColor ?? null,
        },
      },
    };
  }
}
