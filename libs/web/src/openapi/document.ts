import { z } from 'zod';
import { ErrorCode } from '@hookbase/domain';
import { httpStatusFor } from '../error-mapping';
import { operationalWebhooks } from './operational-webhooks';
import { API_TAGS, JsonSchema, RouteCatalog, RouteSpec } from './route-description';

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  /** What Hookbase sends to operational endpoints (operational-webhooks.ts). */
  webhooks: Record<string, { post: JsonSchema }>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
  tags: { name: string }[];
};

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  responses: Record<string, JsonSchema>;
}

const SECURITY_SCHEMES: Record<string, JsonSchema> = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      "An organization's API key (`hb_…`), from POST /api/organizations/{orgId}/api-keys.",
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: "The installation's admin token (HOOKBASE_ADMIN_TOKEN).",
  },
};

/** zod → JSON Schema for what a client sends (defaults make fields optional), without `$schema`. */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** Every error code a route can answer: its own, plus those its guard, body and store imply. */
export function errorCodesOf(route: RouteSpec): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  // Failed authentications per address, and an API key's own budget: 429 with Retry-After.
  if (route.security !== 'none') codes.add('UNAUTHORIZED').add('RATE_LIMITED');
  if (route.method === 'post' || route.method === 'patch') {
    codes.add('INVALID_JSON');
    codes.add('PAYLOAD_TOO_LARGE');
    codes.add('UNSUPPORTED_MEDIA_TYPE');
  }
  // Path parameters too: text PostgreSQL cannot store is refused in any part of a request.
  if (route.body || route.query || route.path.includes('{')) codes.add('VALIDATION_FAILED');
  if (route.usesStore) codes.add('SERVICE_UNAVAILABLE');
  codes.add('INTERNAL');
  return [...codes];
}

function errorResponses(route: RouteSpec): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route)) {
    const status = httpStatusFor(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, JsonSchema> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: codes.join(', '),
      ...(status === 429
        ? {
            headers: {
              'Retry-After': {
                description: 'Seconds to wait before trying again.',
                required: true,
                schema: { type: 'integer', minimum: 1 },
              },
            },
          }
        : {}),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/Error' },
              {
                type: 'object',
                properties: {
                  error: { type: 'object', properties: { code: { enum: codes } } },
                },
              },
            ],
          },
        },
      },
    };
  }
  return responses;
}

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        details: { description: 'e.g. `{ issues: [{ path, message }] }` for VALIDATION_FAILED' },
      },
    },
  },
};

function pathParameters(path: string): JsonSchema[] {
  return [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
}

function queryParameters(schema: z.ZodType): JsonSchema[] {
  const json = inputJsonSchema(schema) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
  }));
}

function operation(route: RouteSpec, schemas: Record<string, JsonSchema>): OpenApiOperation {
  const op: OpenApiOperation = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security:
      route.security === 'none'
        ? []
        : [{ [route.security === 'admin' ? 'adminToken' : 'apiKey']: [] }],
    responses: {
      [String(route.success.status)]: {
        description: route.success.description,
        content: {
          [route.success.contentType ?? 'application/json']: { schema: route.success.schema },
        },
      },
      ...errorResponses(route),
    },
  };
  const parameters = [
    ...pathParameters(route.path),
    ...(route.query ? queryParameters(route.query.schema) : []),
  ];
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body) {
    schemas[route.body.name] = inputJsonSchema(route.body.schema);
    op.requestBody = {
      required: route.body.required,
      content: {
        'application/json': { schema: { $ref: `#/components/schemas/${route.body.name}` } },
      },
    };
  }
  return op;
}

/** The OpenAPI 3.1 document for a route catalog. Pure: the same catalog gives the same document. */
export function buildOpenApiDocument(catalog: RouteCatalog): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = { Error: ERROR_SCHEMA };
  const paths: OpenApiDocument['paths'] = {};
  for (const route of catalog.routes) {
    const item = (paths[route.path] ??= {});
    if (item[route.method]) throw new Error(`${route.method} ${route.path} is listed twice`);
    item[route.method] = operation(route, schemas);
  }
  const used = new Set<string>(catalog.routes.map((route) => route.tag));
  const tags = API_TAGS.filter((name) => used.has(name)).map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: { title: catalog.title, version: catalog.version, description: catalog.description },
    paths,
    webhooks: operationalWebhooks(),
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
    tags,
  };
}
