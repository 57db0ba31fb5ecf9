import { Controller, Get, Inject, OnModuleInit, Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { anyObject } from './response-bodies';
import { DescribeRoute } from './route-description';
import { hookbaseCatalog } from './catalog';
import { buildOpenApiDocument, OpenApiDocument } from './document';

/**
 * The API's OpenAPI document; no auth. It describes the routes this process's controllers
 * register, under the running limits (the documentation site at /docs/ renders it). Built when the module starts, so a
 * process with a route that has no description refuses to start (UndescribedRoutesError).
 */
@Controller()
export class OpenApiController implements OnModuleInit {
  private openApi!: OpenApiDocument;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly modules: ModulesContainer,
  ) {}

  onModuleInit() {
    // Nest's registry of the application's modules (what DiscoveryService reads), so WebModule
    // needs no DiscoveryModule import.
    const controllers = [...this.modules.values()]
      .flatMap((module) => [...module.controllers.values()])
      .map((wrapper) => wrapper.metatype as Type | null)
      .filter((metatype): metatype is Type => typeof metatype === 'function');
    const catalog = hookbaseCatalog(controllers, {
      maxBatchEvents: this.config.http.maxBatchEvents,
    });
    this.openApi = buildOpenApiDocument(catalog);
  }

  @DescribeRoute({
    operationId: 'openApiDocument',
    tag: 'Operations',
    summary: 'This document.',
    security: 'none',
    success: { status: 200, description: 'OpenAPI 3.1 document', schema: anyObject },
    errors: [],
    usesStore: false,
  })
  @Get('openapi.json')
  document() {
    return this.openApi;
  }
}
