export * from './client';
export * from './outbox';
export * from './receiver';
