export * from './client';
export * from './receiver';
