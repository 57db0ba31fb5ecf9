// `npm run schemas`: writes the JSON Schemas we publish from the schemas in code
// (docs/schemas/*.json); a unit test fails when a checked-in file drifts from the code.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

await build();
const { z } = require('zod');
const { eventEnvelopeSchema } = require(join(root, 'dist/libs/domain/src/records.js'));
const envelope = {
  ...z.toJSONSchema(eventEnvelopeSchema),
  title: 'Hookbase event envelope',
  description:
    'A record value on <prefix>.events (default hookbase.events), keyed by organization id. Written by ingest, and by producers that publish straight to Kafka.',
};
writeFileSync(
  join(root, 'docs/schemas/event-envelope.schema.json'),
  `${JSON.stringify(envelope, null, 2)}\n`,
);
console.log('wrote docs/schemas/event-envelope.schema.json');
