export * from './active-trace-id';
export * from './bootstrap';
export * from './nest-logger.adapter';
export * from './service-logger';
export * from './tracing';
