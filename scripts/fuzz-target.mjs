// The process the API fuzz (scripts/fuzz.mjs) runs against: every HTTP route of the standalone
// process, and the fan-out so that published events are recorded, but no dispatcher. The fuzz
// creates endpoints at URLs it generates, public hosts among them, and publishes events to
// them; with nothing dispatching, no request ever leaves for such a host.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => require(join(root, 'dist', 'libs', path));

require('reflect-metadata');
const { requireAdminToken } = dist('config/src');
const { FanoutModule } = dist('fanout/src');
const { IngestModule } = dist('ingest/src');
const { KafkaModule } = dist('kafka/src');
const { ManagementModule } = dist('management/src');
const { PersistenceModule } = dist('persistence/src');
const { bootstrapService } = dist('runtime/src');
const { serveHttp } = dist('web/src');

await bootstrapService(
  {
    name: 'hookbase-fuzz-target',
    http: serveHttp,
    checkConfig: requireAdminToken,
    imports: () => [
      PersistenceModule.forRoot('hookbase-fuzz-target'),
      KafkaModule.forRoot('fuzz-target'),
      IngestModule,
      ManagementModule,
      FanoutModule,
    ],
  },
  process.env,
);
