import { Module } from '@nestjs/common';
import { DeliveryService } from './delivery.service';
import { DispatcherConsumer } from './dispatcher.consumer';
import { RetryScheduler } from './retry-scheduler';

/** Sends messages to their endpoints, schedules retries, dead-letters what cannot succeed. */
@Module({ providers: [DeliveryService, DispatcherConsumer, RetryScheduler] })
export class DispatcherModule {}
