import { Global, Module } from '@nestjs/common';
import { AdminGuard, ApiKeyGuard } from './auth.guards';
import { AuthService } from './auth.service';
import { HealthController } from './health.controller';
import { RefusalCounter, RequestLimits } from './request-limits';
import { OpenApiController } from './openapi/openapi.controller';

@Global()
@Module({
  controllers: [HealthController, OpenApiController],
  providers: [AuthService, ApiKeyGuard, AdminGuard, RequestLimits, RefusalCounter],
  exports: [AuthService, ApiKeyGuard, AdminGuard, RequestLimits, RefusalCounter],
})
export class WebModule {}
