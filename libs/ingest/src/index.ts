export * from './ingest.module';
export * from './publish-batch.use-case';
export * from './publish-event.use-case';
export * from './grpc-errors';
export * from './grpc-ingest.server';
