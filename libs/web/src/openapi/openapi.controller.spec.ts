import 'reflect-metadata';
import { Controller, Get, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { OpenApiController } from './openapi.controller';
import { dataOf } from './response-bodies';
import { DescribeRoute, UndescribedRoutesError } from './route-description';

const config = {
  provide: HOOKBASE_CONFIG,
  useValue: { http: { maxBatchEvents: 5 } } as HookbaseConfig,
};

@Controller('v1/widgets')
class WidgetsController {
  @DescribeRoute((limits) => ({
    operationId: 'sendWidgets',
    tag: 'Events',
    summary: `Up to ${limits.maxBatchEvents} widgets.`,
    security: 'apiKey',
    success: { status: 202, description: 'Accepted', schema: dataOf() },
    errors: [],
    usesStore: true,
  }))
  @Post()
  send() {}
}

@Controller('v1/gadgets')
class GadgetsController {
  @Get()
  list() {}
}

@Module({ controllers: [WidgetsController] })
class WidgetsModule {}

@Module({ controllers: [GadgetsController] })
class GadgetsModule {}

@Module({ imports: [WidgetsModule], controllers: [OpenApiController], providers: [config] })
class DescribedApp {}

@Module({
  imports: [WidgetsModule, GadgetsModule],
  controllers: [OpenApiController],
  providers: [config],
})
class UndescribedApp {}

describe('OpenApiController', () => {
  it("serves the routes of the application's controllers, under the running limits", async () => {
    const app = await NestFactory.createApplicationContext(DescribedApp, { logger: false });
    try {
      const controller = app.get(OpenApiController);
      const document = controller.document();
      expect(
        Object.entries(document.paths).flatMap(([path, item]) =>
          Object.keys(item).map((method) => `${method} ${path}`),
        ),
      ).toEqual(['post /v1/widgets', 'get /openapi.json']);
      expect(document.paths['/v1/widgets'].post.summary).toBe('Up to 5 widgets.');
    } finally {
      await app.close();
    }
  });

  it('stops the application from starting when a route has no description', async () => {
    const start = NestFactory.createApplicationContext(UndescribedApp, {
      logger: false,
      abortOnError: false,
    });
    await expect(start).rejects.toThrow(UndescribedRoutesError);
    await expect(start).rejects.toThrow('GET /v1/gadgets (GadgetsController.list)');
  });
});
