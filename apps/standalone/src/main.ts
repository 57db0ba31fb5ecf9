import '@hookbase/runtime/source-maps';
import 'reflect-metadata';
import { requireAdminToken } from '@hookbase/config';
import { DispatcherModule } from '@hookbase/dispatcher';
import { DlqModule } from '@hookbase/dlq';
import { FanoutModule } from '@hookbase/fanout';
import { IngestModule } from '@hookbase/ingest';
import { KafkaModule } from '@hookbase/kafka';
import { ManagementModule } from '@hookbase/management';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/runtime';
import { serveHttpWithDashboard } from '@hookbase/web';

/** Every service in one process: ingest and the management API on one port, and the workers. */
void bootstrapService(
  {
    name: 'hookbase-standalone',
    http: serveHttpWithDashboard,
    checkConfig: requireAdminToken,
    imports: () => [
      PersistenceModule.forRoot('hookbase-standalone'),
      KafkaModule.forRoot('standalone'),
      IngestModule,
      ManagementModule,
      FanoutModule,
      DispatcherModule,
      DlqModule,
    ],
  },
  process.env,
);
