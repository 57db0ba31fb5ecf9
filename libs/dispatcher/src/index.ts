export * from './delivery.service';
export * from './dispatch-pool';
export * from './dispatcher.consumer';
export * from './dispatcher.module';
export * from './retention.service';
export * from './retry-scheduler';
