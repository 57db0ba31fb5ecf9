export * from './auth.module';
export * from './auth.service';
export * from './request-limits';
