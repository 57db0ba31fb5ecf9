export * from './fanout.consumer';
export * from './fanout.module';
