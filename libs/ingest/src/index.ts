export * from './ingest.module';
export * from './publish-event.use-case';
