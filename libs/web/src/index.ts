export * from './auth.guards';
export * from './error-mapping';
export * from './http-app';
export * from './http-exception.filter';
export * from './web.module';
export * from './health.controller';
export * from './serve-http';
export * from './openapi';
