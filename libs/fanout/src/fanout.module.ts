import { Module } from '@nestjs/common';
import { FanoutConsumer } from './fanout.consumer';

/** Resolves each event's recipients once and writes one message per recipient. */
@Module({ providers: [FanoutConsumer] })
export class FanoutModule {}
