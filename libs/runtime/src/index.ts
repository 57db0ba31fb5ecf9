export * from './bootstrap';
export * from './log-levels';
export * from './tracing';
