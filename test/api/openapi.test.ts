import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import 'reflect-metadata';
import { RequestMethod, Type } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { DEFAULT_MAX_BATCH_EVENTS } from '@hookbase/config';
import { IngestModule } from '@hookbase/ingest';
import { ManagementModule } from '@hookbase/management';
import { ApiClient, createTenant, RunningStack, startStack } from '@hookbase/testing';
import {
  AdminGuard,
  AdminOnlyGuard,
  ApiKeyGuard,
  ApiKeyOrAdminGuard,
  buildOpenApiDocument,
  controllersOf,
  errorCodesOf,
  hookbaseCatalog,
  OpenApiDocument,
  RouteCatalog,
  WebModule,
} from '@hookbase/web';

const checkedIn = JSON.parse(
  readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'),
) as OpenApiDocument;

/** Every route Nest registers from the services' modules, as `method path` in OpenAPI form. */
function registeredRoutes(): string[] {
  const routes: string[] = [];
  for (const module of [IngestModule, ManagementModule, WebModule]) {
    const controllers: (new (...args: never[]) => object)[] =
      Reflect.getMetadata('controllers', module) ?? [];
    for (const controller of controllers) {
      const prefix: string = Reflect.getMetadata('path', controller) ?? '';
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (typeof handler !== 'function') continue;
        const method: RequestMethod | undefined = Reflect.getMetadata('method', handler);
        const path: string | undefined = Reflect.getMetadata('path', handler);
        if (method === undefined || path === undefined) continue;
        const full = `/${[prefix, path]
          .map((part) => part.replace(/^\/+|\/+$/g, ''))
          .filter(Boolean)
          .join('/')}`.replace(/:(\w+)/g, '{$1}');
        routes.push(`${RequestMethod[method].toLowerCase()} ${full}`);
      }
    }
  }
  return routes.sort();
}

/** The guard each registered route runs under, as `method path` → security. */
function routeGuards(): Record<string, string> {
  const guards: Record<string, string> = {};
  for (const controller of controllersOf([IngestModule, ManagementModule, WebModule])) {
    const prefix: string = Reflect.getMetadata('path', controller) ?? '';
    const onClass: Type[] = Reflect.getMetadata(GUARDS_METADATA, controller) ?? [];
    for (const name of Object.getOwnPropertyNames(controller.prototype)) {
      const handler = (controller.prototype as Record<string, unknown>)[name];
      if (typeof handler !== 'function') continue;
      const method: RequestMethod | undefined = Reflect.getMetadata('method', handler);
      const path: string | undefined = Reflect.getMetadata('path', handler);
      if (method === undefined || path === undefined) continue;
      const all = [...onClass, ...(Reflect.getMetadata(GUARDS_METADATA, handler) ?? [])];
      const security = all.some((guard) => guard === AdminGuard || guard === AdminOnlyGuard)
        ? 'admin'
        : all.includes(ApiKeyGuard) || all.includes(ApiKeyOrAdminGuard)
          ? 'apiKey'
          : 'none';
      const full = `/${[prefix, path]
        .map((part) => part.replace(/^\/+|\/+$/g, ''))
        .filter(Boolean)
        .join('/')}`.replace(/:(\w+)/g, '{$1}');
      guards[`${RequestMethod[method].toLowerCase()} ${full}`] = security;
    }
  }
  return guards;
}

const catalog: RouteCatalog = hookbaseCatalog(
  controllersOf([IngestModule, ManagementModule, WebModule]),
  { maxBatchEvents: DEFAULT_MAX_BATCH_EVENTS },
);

describe('the route descriptions', () => {
  it('describe exactly the routes the controllers register', () => {
    const described = catalog.routes.map((r) => `${r.method} ${r.path}`).sort();
    expect(registeredRoutes()).toEqual(described);
  });

  it('state the guard each route runs under', () => {
    const declared = Object.fromEntries(
      catalog.routes.map((r) => [`${r.method} ${r.path}`, r.security]),
    );
    expect(declared).toEqual(routeGuards());
  });
});

describe('the OpenAPI document generated from the controllers', () => {
  const document = buildOpenApiDocument(catalog);
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );

  it('is the checked-in docs/openapi.json (run `npm run openapi` when this fails)', () => {
    expect(JSON.parse(JSON.stringify(document))).toEqual(checkedIn);
  });

  it('lists every route once, and every route answers at least one coded error', () => {
    expect(operations).toHaveLength(catalog.routes.length);
    for (const route of catalog.routes) {
      expect(errorCodesOf(route).length).toBeGreaterThan(0);
      const op = document.paths[route.path][route.method];
      const errors = Object.keys(op.responses).filter((status) => Number(status) >= 400);
      expect({ route: route.operationId, errors: errors.length > 0 }).toEqual({
        route: route.operationId,
        errors: true,
      });
    }
  });

  it('has well-formed paths whose parameters are all declared', () => {
    for (const { path, op } of operations) {
      expect(path).toMatch(/^(\/(?:[a-z0-9.-]+|\{[A-Za-z][A-Za-z0-9]*\}))+$/);
      const names = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      expect(declared).toEqual(names);
    }
  });

  it('is structurally valid: unique operation ids, resolvable refs, responses with descriptions', () => {
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)];
    for (const [, name] of refs) expect(document.components.schemas[name]).toBeDefined();
    for (const { method, op } of operations) {
      expect(['get', 'post', 'patch', 'delete', 'put']).toContain(method);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(status).toMatch(/^[1-5]\d\d$/);
        expect(response.description).toEqual(expect.any(String));
      }
      for (const requirement of op.security) {
        for (const scheme of Object.keys(requirement)) {
          expect(document.components.securitySchemes[scheme]).toBeDefined();
        }
      }
    }
  });

  it('takes request schemas from the zod inputs, defaults optional', () => {
    const publish = document.components.schemas.PublishEvent as { required: string[] };
    expect(publish.required.sort()).toEqual(['eventType', 'payload']);
    const batch = document.components.schemas.PublishEventBatch as {
      properties: { events: { minItems: number; maxItems: number } };
    };
    expect(batch.properties.events).toMatchObject({
      minItems: 1,
      maxItems: DEFAULT_MAX_BATCH_EVENTS,
    });
  });
});

describe('the OpenAPI document served', () => {
  let stack: RunningStack;
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let admin: ApiClient;
  let endpointId: string;

  beforeAll(async () => {
    stack = await startStack();
    admin = new ApiClient(stack.url, stack.adminToken);
    tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const endpoint = await tenant.client.post(
      `/api/organizations/${tenant.organizationId}/webhook-endpoints`,
      { url: 'http://127.0.0.1:9/hooks' },
    );
    expect(endpoint.status).toBe(201);
    endpointId = endpoint.body.data.id;
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('is the checked-in docs/openapi.json (run `npm run openapi` when this fails)', async () => {
    const served = await new ApiClient(stack.url).get('/openapi.json');
    expect(served.status).toBe(200);
    expect(served.body).toEqual(checkedIn);
  });

  it('names only routes that exist: each answers something other than 404 ROUTE_NOT_FOUND or 405', async () => {
    const ids: Record<string, string> = {
      orgId: tenant.organizationId,
      endpointId,
      messageId: 'msg_00000000000000000000000000',
      eventId: 'evt_00000000000000000000000000',
      dlqId: 'dlq_00000000000000000000000000',
    };
    const operations = Object.entries(checkedIn.paths)
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))
      // Deleting the endpoint last keeps its id valid for the other calls.
      .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    const answers: string[] = [];
    for (const { path, method, op } of operations) {
      const scheme = Object.keys(op.security[0] ?? {})[0];
      const client = scheme === 'adminToken' ? admin : scheme === 'apiKey' ? tenant.client : null;
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]);
      const body = method === 'post' || method === 'patch' ? {} : undefined;
      const response = await (client ?? new ApiClient(stack.url)).request(
        method.toUpperCase(),
        url,
        body,
      );
      const code = (response.body as { error?: { code?: string } } | null)?.error?.code;
      answers.push(`${method} ${path} ${response.status} ${code ?? ''}`.trim());
      expect({ route: `${method} ${path}`, code }).not.toEqual({
        route: `${method} ${path}`,
        code: 'ROUTE_NOT_FOUND',
      });
      expect({ route: `${method} ${path}`, status: response.status }).not.toEqual({
        route: `${method} ${path}`,
        status: 405,
      });
      expect(response.status).toBeLessThan(500);
    }
    expect(answers).toHaveLength(catalog.routes.length);
  });
});

describe('the OpenAPI document under a configured batch limit', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startStack({ HOOKBASE_MAX_BATCH_EVENTS: '3' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('states the running limit as the batch maxItems, and the API keeps to it', async () => {
    const served = await new ApiClient(stack.url).get('/openapi.json');
    expect(served.status).toBe(200);
    const document = served.body as OpenApiDocument;
    const batch = document.components.schemas.PublishEventBatch as {
      properties: { events: { minItems: number; maxItems: number } };
    };
    expect(batch.properties.events).toMatchObject({ minItems: 1, maxItems: 3 });
    expect(checkedIn.components.schemas.PublishEventBatch).toMatchObject({
      properties: { events: { maxItems: 500 } },
    });

    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const event = { eventType: 'order.created', payload: {} };
    const three = await tenant.client.post('/v1/events/batch', { events: [event, event, event] });
    expect(three.status).toBe(207);
    const four = await tenant.client.post('/v1/events/batch', {
      events: [event, event, event, event],
    });
    expect(four.status).toBe(400);
    expect(four.body.error.code).toBe('VALIDATION_FAILED');
    expect(four.body.error.message).toContain('1 to 3 events');
  });
});
