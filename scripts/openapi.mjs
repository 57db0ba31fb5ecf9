// `npm run openapi`: writes docs/openapi.json, the OpenAPI 3.1 document generated from the routes
// the HTTP services' controllers register and the description each declares (@DescribeRoute, see
// libs/web/src/openapi), under the default limits; an integration test fails when the checked-in
// file drifts from what the services serve at GET /openapi.json.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const dist = (lib) => require(join(root, 'dist/libs', lib, 'src/index.js'));

await build();
require('reflect-metadata');
const { DEFAULT_MAX_BATCH_EVENTS } = dist('config');
const { IngestModule } = dist('ingest');
const { ManagementModule } = dist('management');
const { buildOpenApiDocument, controllersOf, hookbaseCatalog, WebModule } = dist('web');
const controllers = controllersOf([IngestModule, ManagementModule, WebModule]);
const document = buildOpenApiDocument(
  hookbaseCatalog(controllers, { maxBatchEvents: DEFAULT_MAX_BATCH_EVENTS }),
);
writeFileSync(join(root, 'docs/openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
console.log(`wrote docs/openapi.json (${Object.keys(document.paths).length} paths)`);
