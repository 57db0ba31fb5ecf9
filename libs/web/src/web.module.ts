import { Global, Module } from '@nestjs/common';
import { AuthModule } from '@hookbase/auth';
import { AdminGuard, ApiKeyGuard, ApiKeyOrAdminGuard } from './auth.guards';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';
import { OpenApiController } from './openapi/openapi.controller';

@Global()
@Module({
  imports: [AuthModule],
  controllers: [HealthController, MetricsController, OpenApiController],
  providers: [ApiKeyGuard, AdminGuard, ApiKeyOrAdminGuard],
  exports: [AuthModule, ApiKeyGuard, AdminGuard, ApiKeyOrAdminGuard],
})
export class WebModule {}
