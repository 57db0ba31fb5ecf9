import { Module } from '@nestjs/common';
import { EndpointSettingsService } from './endpoint-settings.service';
import { EndpointsController } from './endpoints.controller';
import { LogController } from './log.controller';
import { OrganizationsController } from './organizations.controller';

/** The management API: organizations and keys, endpoints, the message log and the DLQ. */
@Module({
  controllers: [OrganizationsController, EndpointsController, LogController],
  providers: [EndpointSettingsService],
})
export class ManagementModule {}
