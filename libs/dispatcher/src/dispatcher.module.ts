import { Module } from '@nestjs/common';
import { AttemptRecorder } from './attempt-recorder';
import { DeliveryService } from './delivery.service';
import { DispatcherConsumer } from './dispatcher.consumer';
import { FifoLaneRunner } from './fifo-lane-runner';
import { RetentionService } from './retention.service';
import { RetryScheduler } from './retry-scheduler';

/** Sends messages to their endpoints, schedules retries, dead-letters what cannot succeed, prunes. */
@Module({
  providers: [
    AttemptRecorder,
    DeliveryService,
    DispatcherConsumer,
    FifoLaneRunner,
    RetryScheduler,
    RetentionService,
  ],
})
export class DispatcherModule {}
