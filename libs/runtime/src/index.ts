export * from './bootstrap';
export * from './log-levels';
