import { Module } from '@nestjs/common';
import { ApplicationLookup } from './application-lookup';
import { EventsController } from './events.controller';
import { GrpcIngestServer } from './grpc-ingest.server';
import { PublishBatch } from './publish-batch.use-case';
import { PublishEvent } from './publish-event.use-case';

/**
 * `POST /v1/events` and gRPC `hookbase.v1.Ingest`: validates, enforces idempotency, and accepts
 * events onto Kafka.
 */
@Module({
  controllers: [EventsController],
  providers: [PublishEvent, PublishBatch, GrpcIngestServer, ApplicationLookup],
})
export class IngestModule {}
