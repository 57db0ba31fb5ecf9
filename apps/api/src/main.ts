import '@hookbase/runtime/source-maps';
import 'reflect-metadata';
import { requireAdminToken } from '@hookbase/config';
import { KafkaModule } from '@hookbase/kafka';
import { ManagementModule } from '@hookbase/management';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/runtime';
import { serveHttpWithDashboard } from '@hookbase/web';

void bootstrapService(
  {
    name: 'hookbase-api',
    http: serveHttpWithDashboard,
    checkConfig: requireAdminToken,
    imports: () => [
      PersistenceModule.forRoot('hookbase-api'),
      KafkaModule.forRoot('api'),
      ManagementModule,
    ],
  },
  process.env,
);
