import '@hookbase/runtime/source-maps';
import 'reflect-metadata';
import { IngestModule } from '@hookbase/ingest';
import { KafkaModule } from '@hookbase/kafka';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/runtime';
import { serveHttp } from '@hookbase/web';

void bootstrapService(
  {
    name: 'hookbase-ingest',
    http: serveHttp,
    imports: () => [
      PersistenceModule.forRoot('hookbase-ingest'),
      KafkaModule.forRoot('ingest'),
      IngestModule,
    ],
  },
  process.env,
);
