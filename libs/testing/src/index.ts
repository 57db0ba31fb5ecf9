export * from './api-client';
export * from './poll-until';
export * from './stack';
export * from './test-database';
export * from './test-receiver';
export * from './tcp-proxy';
export * from './scratch-kafka';
export * from './emulators';
