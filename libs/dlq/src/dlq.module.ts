import { Module } from '@nestjs/common';
import { DlqConsumer } from './dlq.consumer';

@Module({ providers: [DlqConsumer] })
export class DlqModule {}
