import { OperationalEventPublisher, OperationalOutboxRelay } from '@hookbase/kafka';
import { HookbaseMetrics } from '@hookbase/runtime';
import { Module } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { AttemptRecorder } from './attempt-recorder';
import { AttemptService } from './attempt.service';
import { DeadLetterService } from './dead-letter.service';
import { DeliveryService } from './delivery.service';
import { destinationRegistryProvider } from './destination-registry.provider';
import { DispatcherConsumer } from './dispatcher.consumer';
import { EndpointGuards } from './endpoint-guards';
import { EndpointHealthService } from './endpoint-health.service';
import { EventPayloads } from './event-payloads';
import { DISPATCH_SLOTS, DispatchPool } from './dispatch-pool';
import { FifoBlockedSweeper } from './fifo-blocked-sweeper';
import { FifoLaneRunner } from './fifo-lane-runner';
import { RetentionService } from './retention.service';
import { RetryScheduler } from './retry-scheduler';
import { StreamAttemptMarks } from './stream-attempt-marks';

/** Sends messages to their endpoints, schedules retries, dead-letters what cannot succeed, prunes. */
@Module({
  providers: [
    {
      provide: DISPATCH_SLOTS,
      inject: [HOOKBASE_CONFIG, { token: HookbaseMetrics, optional: true }],
      useFactory: (config: HookbaseConfig, catalog?: HookbaseMetrics) => {
        const pool = new DispatchPool(
          config.delivery.dispatchConcurrency,
          config.delivery.organizationShare,
        );
        catalog?.addScrapeSource(pool);
        return pool;
      },
    },
    destinationRegistryProvider,
    AttemptRecorder,
    EndpointGuards,
    EndpointHealthService,
    OperationalEventPublisher,
    OperationalOutboxRelay,
    AttemptService,
    DeadLetterService,
    EventPayloads,
    StreamAttemptMarks,
    DeliveryService,
    DispatcherConsumer,
    FifoLaneRunner,
    FifoBlockedSweeper,
    RetryScheduler,
    RetentionService,
  ],
})
export class DispatcherModule {}
