import { Controller, Get, Header, Inject } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { hookbaseCatalog } from './catalog';
import { renderDocsPage } from './docs-page';
import { buildOpenApiDocument, OpenApiDocument } from './document';

/** The API's OpenAPI document and a page rendering it; no auth. Limits are the running ones. */
@Controller()
export class OpenApiController {
  private cached?: { document: OpenApiDocument; page: string };

  constructor(@Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig) {}

  private docs() {
    if (!this.cached) {
      const catalog = hookbaseCatalog({ maxBatchEvents: this.config.http.maxBatchEvents });
      const document = buildOpenApiDocument(catalog);
      this.cached = { document, page: renderDocsPage(document) };
    }
    return this.cached;
  }

  @Get('openapi.json')
  document() {
    return this.docs().document;
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  page() {
    return this.docs().page;
  }
}
