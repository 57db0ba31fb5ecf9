import { Global, Module } from '@nestjs/common';
import { AdminGuard, ApiKeyGuard } from './auth.guards';
import { AuthService } from './auth.service';
import { HealthController } from './health.controller';
import { OpenApiController } from './openapi/openapi.controller';

@Global()
@Module({
  controllers: [HealthController, OpenApiController],
  providers: [AuthService, ApiKeyGuard, AdminGuard],
  exports: [AuthService, ApiKeyGuard, AdminGuard],
})
export class WebModule {}
