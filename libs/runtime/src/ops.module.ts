import { DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { OpsServer } from './ops-server';
import { ReadinessService } from './readiness.service';

/**
 * What every service offers its operators: the readiness of its dependencies, and, for a worker
 * without HTTP, a small server of its own that answers health (see OpsServer).
 */
@Global()
@Module({})
export class OpsModule {
  static forService(options: { ownServer: boolean }): DynamicModule {
    return {
      module: OpsModule,
      imports: [DiscoveryModule],
      providers: [ReadinessService, ...(options.ownServer ? [OpsServer] : [])],
      exports: [ReadinessService],
    };
  }
}
