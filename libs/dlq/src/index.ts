export * from './dlq.consumer';
export * from './dlq.module';
