import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { EndpointRepository } from '@hookbase/persistence';
import {
  ApiKeyGuard,
  applicationStatsBody,
  dataOf,
  DescribeRoute,
  OrganizationId,
  PortalRoute,
} from '@hookbase/web';
import { ApplicationsService } from './applications.service';
import { DeliveryStatsService } from './delivery-stats.service';
import { PortalScopeGuard } from './portal-scope.guard';

/**
 * An application's delivery statistics: its live endpoints' last hour together, the endpoint
 * statistics summed. Application-scoped: a portal token reads its own application's.
 */
@Controller('api/organizations/:orgId/applications')
@UseGuards(ApiKeyGuard, PortalScopeGuard)
@PortalRoute()
export class ApplicationStatsController {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly endpoints: EndpointRepository,
    private readonly deliveryStats: DeliveryStatsService,
  ) {}

  @DescribeRoute({
    operationId: 'getApplicationStats',
    tag: 'Applications',
    summary:
      "The last hour of an application's live endpoints together (id or uid): attempts per minute by outcome with their median and longest latency, the success rate, and the 20 latest attempts.",
    security: 'apiKey',
    success: { status: 200, description: 'The statistics', schema: dataOf(applicationStatsBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Get(':appId/stats')
  async stats(@OrganizationId() organizationId: string, @Param('appId') appId: string) {
    const application = await this.applications.require(organizationId, appId);
    const endpoints = await this.endpoints.liveOfApplication(organizationId, application.id);
    const ids = endpoints.map((endpoint) => endpoint.id);
    return { data: { ...(await this.deliveryStats.lastHour(ids)), endpoints: ids.length } };
  }
}
