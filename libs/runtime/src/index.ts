export * from './bootstrap';
export * from './health-answers';
export * from './log-levels';
export * from './ops.module';
export * from './readiness.service';
export * from './metrics';
