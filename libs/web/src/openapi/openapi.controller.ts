import { Controller, Get, Header } from '@nestjs/common';
import { HOOKBASE_CATALOG } from './catalog';
import { renderDocsPage } from './docs-page';
import { buildOpenApiDocument, OpenApiDocument } from './document';

let cached: { document: OpenApiDocument; page: string } | undefined;
function docs() {
  if (!cached) {
    const document = buildOpenApiDocument(HOOKBASE_CATALOG);
    cached = { document, page: renderDocsPage(document) };
  }
  return cached;
}

/** The API's OpenAPI document and a page rendering it; no auth. */
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document() {
    return docs().document;
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  page() {
    return docs().page;
  }
}
