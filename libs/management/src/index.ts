export * from './management.module';
