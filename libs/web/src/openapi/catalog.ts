import { Type } from '@nestjs/common';
import {
  API_TAGS,
  CatalogLimits,
  describedRoutes,
  HttpMethod,
  RouteCatalog,
} from './route-description';

const METHOD_ORDER: HttpMethod[] = ['get', 'post', 'patch', 'delete'];

/**
 * The HTTP API as the OpenAPI document (`buildOpenApiDocument`) describes it: the routes of the
 * given controllers, each with the description declared on its handler (@DescribeRoute), listed
 * by tag, path and method: the same document whatever order the modules were registered in.
 */
export const hookbaseCatalog = (controllers: Type[], limits: CatalogLimits): RouteCatalog => ({
  title: 'Hookbase HTTP API',
  version: '0.1.0',
  description:
    'Webhook and event delivery. Every error answers `{ error: { code, message, details? } }`. JSON bodies nested beyond 64 levels, integers beyond ±(2^53 − 1) and numbers that overflow a double are refused with 400 VALIDATION_FAILED (send such values as strings); keys `__proto__` and `constructor.prototype` with 400 INVALID_JSON. Every response carries `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`. Generated from the code (libs/web/src/openapi); regenerate with `npm run openapi`.',
  routes: describedRoutes(controllers, limits).sort(
    (a, b) =>
      API_TAGS.indexOf(a.tag) - API_TAGS.indexOf(b.tag) ||
      Number(a.path > b.path) - Number(a.path < b.path) ||
      METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method),
  ),
});
