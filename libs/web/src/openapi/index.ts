export * from './route-description';
export * from './response-bodies';
export * from './endpoint-bodies';
export * from './catalog';
export * from './document';
export * from './openapi.controller';
