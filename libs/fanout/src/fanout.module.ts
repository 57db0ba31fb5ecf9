import { Module } from '@nestjs/common';
import { EnvelopeAdmission } from './envelope-admission.service';
import { FanoutConsumer } from './fanout.consumer';
import { RECORD_EVENT_MESSAGES_PROVIDERS } from './record-event-messages.use-case';

/** Resolves each event's recipients once and writes one message per recipient. */
@Module({ providers: [FanoutConsumer, EnvelopeAdmission, ...RECORD_EVENT_MESSAGES_PROVIDERS] })
export class FanoutModule {}
