export * from './batch-consumer';
export * from './kafka-producer';
export * from './kafka.module';
export * from './topics';
export * from './topic-worker';
export * from './trace-context';
export * from './kafka-readiness';
export * from './consumer-lag.source';
