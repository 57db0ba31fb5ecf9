import { Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { PublishEvent } from './publish-event.use-case';

/** `POST /v1/events`: validates, enforces idempotency, and accepts events onto Kafka. */
@Module({ controllers: [EventsController], providers: [PublishEvent] })
export class IngestModule {}
