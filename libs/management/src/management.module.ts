import { OperationalEventPublisher, OperationalOutboxRelay } from '@hookbase/kafka';
import { Module } from '@nestjs/common';
import { ApplicationStatsController } from './application-stats.controller';
import { ApplicationsController } from './applications.controller';
import { ApplicationsService } from './applications.service';
import { DeliveryStatsService } from './delivery-stats.service';
import { EndpointSettingsService } from './endpoint-settings.service';
import { EndpointTestSendService } from './endpoint-test-send.service';
import { EndpointsController } from './endpoints.controller';
import { EventTypesController } from './event-types.controller';
import { InvalidEventsController } from './invalid-events.controller';
import { LogController } from './log.controller';
import { OperationalEndpointsController } from './operational-endpoints.controller';
import { OrganizationsController } from './organizations.controller';
import { PollController } from './poll.controller';
import { PortalAccessController } from './portal-access.controller';
import { PortalScopeGuard } from './portal-scope.guard';
import { PortalSessionController } from './portal-session.controller';
import { ReplayController } from './replay.controller';
import { ReplayService } from './replay.service';

/** The management API: organizations and keys, endpoints, polling, the message log and the DLQ. */
@Module({
  controllers: [
    OrganizationsController,
    ApplicationsController,
    ApplicationStatsController,
    PortalAccessController,
    PortalSessionController,
    EndpointsController,
    OperationalEndpointsController,
    EventTypesController,
    PollController,
    LogController,
    ReplayController,
    InvalidEventsController,
  ],
  providers: [
    EndpointSettingsService,
    EndpointTestSendService,
    OperationalEventPublisher,
    OperationalOutboxRelay,
    ReplayService,
    DeliveryStatsService,
    ApplicationsService,
    PortalScopeGuard,
  ],
})
export class ManagementModule {}
