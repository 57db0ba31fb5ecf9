import { DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { HookbaseMetrics } from './metrics/hookbase-metrics';
import { METRICS, NO_METRICS } from './metrics/metric-recorders';
import { OpsServer } from './ops-server';
import { ReadinessService } from './readiness.service';
import { RequestBodies } from './request-bodies';
import { ShutdownCoordinator } from './shutdown-coordinator';

/**
 * What every service offers its operators: the readiness of its dependencies, its metrics (one
 * catalog per process, injected under METRICS where things are counted), and, for a worker
 * without HTTP, a small server of its own that answers health and metrics (see OpsServer).
 *
 * With `HOOKBASE_METRICS=false` there is no catalog: the HookbaseMetrics provider is null (scrape
 * sources register nowhere, `/metrics` answers 404) and METRICS counts nothing (NO_METRICS).
 */
@Global()
@Module({})
export class OpsModule {
  static forService(options: { ownServer: boolean }): DynamicModule {
    return {
      module: OpsModule,
      imports: [DiscoveryModule],
      providers: [
        ReadinessService,
        ShutdownCoordinator,
        {
          provide: HookbaseMetrics,
          useFactory: (config: HookbaseConfig): HookbaseMetrics | null =>
            config.metrics.enabled
              ? new HookbaseMetrics({
                  endpointLabels: config.metrics.endpointLabels,
                  processMetrics: true,
                })
              : null,
          inject: [HOOKBASE_CONFIG],
        },
        {
          provide: METRICS,
          useFactory: (metrics: HookbaseMetrics | null) => metrics ?? NO_METRICS,
          inject: [HookbaseMetrics],
        },
        RequestBodies,
        ...(options.ownServer ? [OpsServer] : []),
      ],
      exports: [ReadinessService, ShutdownCoordinator, HookbaseMetrics, METRICS, RequestBodies],
    };
  }
}
