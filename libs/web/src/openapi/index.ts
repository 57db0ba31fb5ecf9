export * from './catalog';
export * from './document';
export * from './docs-page';
export * from './openapi.controller';
