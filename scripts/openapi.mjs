// `npm run openapi`: writes docs/openapi.json, the OpenAPI 3.1 document generated from the route
// catalog in libs/web/src/openapi; an integration test fails when the checked-in file drifts from
// what the services serve at GET /openapi.json.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

await build();
const { buildOpenApiDocument, HOOKBASE_CATALOG } = require(
  join(root, 'dist/libs/web/src/openapi/index.js'),
);
const document = buildOpenApiDocument(HOOKBASE_CATALOG);
writeFileSync(join(root, 'docs/openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
console.log(`wrote docs/openapi.json (${Object.keys(document.paths).length} paths)`);
