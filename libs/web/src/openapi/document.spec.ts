import 'reflect-metadata';
import { Controller, Delete, Get, Module, Patch, Post, Put, Type } from '@nestjs/common';
import { z } from 'zod';
import { hookbaseCatalog } from './catalog';
import { buildOpenApiDocument, errorCodesOf } from './document';
import { createEndpointBody } from './endpoint-bodies';
import { anyObject, dataOf } from './response-bodies';
import {
  controllersOf,
  DescribeRoute,
  describedRoutes,
  openApiPath,
  RouteDescription,
  UndescribedRoutesError,
} from './route-description';

const described = (
  operationId: string,
  more: Partial<RouteDescription> = {},
): RouteDescription => ({
  operationId,
  tag: 'Endpoints',
  summary: `${operationId}.`,
  security: 'apiKey',
  success: { status: 200, description: 'OK', schema: dataOf() },
  errors: ['ORGANIZATION_NOT_FOUND'],
  usesStore: true,
  ...more,
});

@Controller('api/organizations/:orgId/things')
class ThingsController {
  @DescribeRoute(described('deleteThing'))
  @Delete(':thingId')
  remove() {}

  @DescribeRoute(
    described('createThing', {
      body: { name: 'CreateThing', schema: createEndpointBody, required: true },
    }),
  )
  @Post()
  create() {}

  @DescribeRoute((limits) =>
    described('sendThings', {
      tag: 'Events',
      summary: `Up to ${limits.maxBatchEvents}.`,
      body: {
        name: 'SendThings',
        schema: z.object({ things: z.array(z.string()).max(limits.maxBatchEvents) }),
        required: true,
      },
    }),
  )
  @Post('/send/')
  send() {}

  @DescribeRoute(
    described('listThings', {
      query: { name: 'ThingQuery', schema: z.object({ limit: z.coerce.number().default(50) }) },
    }),
  )
  @Get()
  list() {}

  @DescribeRoute(described('getThing'))
  @Get(':thingId')
  get() {}

  @DescribeRoute(described('updateThing', { security: 'admin' }))
  @Patch(':thingId')
  update() {}

  /** Not a route: no Nest method decorator. */
  helper() {}
}

@Controller()
class PublicController {
  @DescribeRoute(
    described('ping', {
      tag: 'Operations',
      security: 'none',
      success: {
        status: 200,
        description: 'Text',
        schema: { type: 'string' },
        contentType: 'text/plain',
      },
      errors: [],
      usesStore: false,
    }),
  )
  @Get('ping')
  ping() {}
}

@Module({ controllers: [ThingsController, PublicController] })
class ThingsModule {}

const limits = { maxBatchEvents: 7 };

describe('route descriptions read from the controllers', () => {
  it('takes method and path from the Nest decorators, in OpenAPI form', () => {
    const routes = describedRoutes([ThingsController, PublicController], limits);
    expect(routes.map((r) => `${r.method} ${r.path} ${r.operationId}`)).toEqual([
      'delete /api/organizations/{orgId}/things/{thingId} deleteThing',
      'post /api/organizations/{orgId}/things createThing',
      'post /api/organizations/{orgId}/things/send sendThings',
      'get /api/organizations/{orgId}/things listThings',
      'get /api/organizations/{orgId}/things/{thingId} getThing',
      'patch /api/organizations/{orgId}/things/{thingId} updateThing',
      'get /ping ping',
    ]);
  });

  it('joins prefixes and paths as Nest does', () => {
    expect(openApiPath('', '')).toBe('/');
    expect(openApiPath('/v1/events/', '/')).toBe('/v1/events');
    expect(openApiPath('api/organizations/:orgId', 'dlq/:dlqId/retry')).toBe(
      '/api/organizations/{orgId}/dlq/{dlqId}/retry',
    );
  });

  it('gives a description that depends on the limits the running ones', () => {
    const [send] = describedRoutes([ThingsController], { maxBatchEvents: 3 }).filter(
      (r) => r.operationId === 'sendThings',
    );
    expect(send.summary).toBe('Up to 3.');
  });

  it('refuses a registered route without a description, naming it', () => {
    @Controller('v1/widgets')
    class WidgetsController {
      @DescribeRoute(described('listWidgets'))
      @Get()
      list() {}

      @Post(':widgetId/spin')
      spin() {}
    }
    const read = () => describedRoutes([ThingsController, WidgetsController], limits);
    expect(read).toThrow(UndescribedRoutesError);
    expect(read).toThrow('POST /v1/widgets/{widgetId}/spin (WidgetsController.spin)');
  });

  it('refuses a route of a method the document cannot state', () => {
    @Controller('v1/widgets')
    class WidgetsController {
      @DescribeRoute(described('replaceWidget'))
      @Put(':widgetId')
      replace() {}
    }
    expect(() => describedRoutes([WidgetsController], limits)).toThrow(
      'PUT /v1/widgets/{widgetId} (WidgetsController.replace)',
    );
  });

  it('finds the controllers a module declares', () => {
    expect(controllersOf([ThingsModule])).toEqual([ThingsController, PublicController]);
  });

  it('lists routes by tag, path and method, whatever order the controllers come in', () => {
    const ids = (controllers: Type[]) =>
      hookbaseCatalog(controllers, limits).routes.map((r) => r.operationId);
    const forward = ids([ThingsController, PublicController]);
    expect(forward).toEqual([
      'sendThings',
      'listThings',
      'createThing',
      'getThing',
      'updateThing',
      'deleteThing',
      'ping',
    ]);
    expect(ids([PublicController, ThingsController])).toEqual(forward);
  });
});

describe('the OpenAPI document', () => {
  const catalog = hookbaseCatalog([ThingsController, PublicController], limits);
  const document = buildOpenApiDocument(catalog);

  it('has the required top-level fields of OpenAPI 3.1', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toEqual(expect.any(String));
    expect(document.info.version).toEqual(expect.any(String));
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
  });

  it('states each route with its security, parameters, body and answers', () => {
    const update = document.paths['/api/organizations/{orgId}/things/{thingId}'].patch;
    expect(update.security).toEqual([{ adminToken: [] }]);
    expect(update.parameters?.map((p) => p.name)).toEqual(['orgId', 'thingId']);
    expect(Object.keys(update.responses)).toEqual([
      '200',
      '400',
      '401',
      '404',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    const list = document.paths['/api/organizations/{orgId}/things'].get;
    expect(list.parameters).toContainEqual({
      name: 'limit',
      in: 'query',
      required: false,
      schema: expect.objectContaining({ default: 50 }),
    });
    const ping = document.paths['/ping'].get;
    expect(ping.security).toEqual([]);
    expect(ping.responses['200']).toEqual({
      description: 'Text',
      content: { 'text/plain': { schema: { type: 'string' } } },
    });
    expect(Object.keys(ping.responses)).toEqual(['200', '500']);
    expect(errorCodesOf(catalog.routes.find((r) => r.operationId === 'ping')!)).toEqual([
      'INTERNAL',
    ]);
  });

  it('lists the tags used, in the order of API_TAGS', () => {
    expect(document.tags).toEqual([
      { name: 'Events' },
      { name: 'Endpoints' },
      { name: 'Operations' },
    ]);
  });

  it('refuses a route described twice', () => {
    const twice = { ...catalog, routes: [...catalog.routes, catalog.routes[0]] };
    expect(() => buildOpenApiDocument(twice)).toThrow('listed twice');
  });

  it('takes request schemas from the zod inputs, defaults optional', () => {
    type ObjectSchema = {
      properties: Record<string, { const?: string; required?: string[] }>;
      required?: string[];
      additionalProperties?: boolean;
    };
    // One branch per kind: http (and polling) with `kind` defaulted, then each cloud kind with
    // its config schema.
    const [http, ...cloud] = (document.components.schemas.CreateThing as { anyOf: ObjectSchema[] })
      .anyOf;
    expect(http.properties.url).toEqual({ type: 'string', maxLength: 2048 });
    expect(http.required ?? []).not.toContain('kind');
    expect(http.additionalProperties).toBe(false);
    expect(cloud.map((branch) => branch.properties.kind.const)).toEqual([
      'sqs',
      'sns',
      'eventbridge',
      'pubsub',
      's3',
    ]);
    for (const branch of cloud) {
      expect(branch.required).toEqual(expect.arrayContaining(['kind', 'config']));
      expect(branch.additionalProperties).toBe(false);
    }
    expect(cloud[0].properties.config.required).toEqual(['region', 'queueUrl']);
    const send = document.components.schemas.SendThings as {
      properties: { things: { maxItems: number } };
    };
    expect(send.properties.things.maxItems).toBe(7);
    expect(anyObject).toEqual({ type: 'object' });
  });
});
