export * from './auth.guards';
export * from './auth.service';
export * from './error-mapping';
export * from './http-app';
export * from './http-exception.filter';
export * from './web.module';
export * from './health.controller';
export * from './bootstrap';
