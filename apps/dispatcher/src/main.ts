import '@hookbase/runtime/source-maps';
import 'reflect-metadata';
import { DispatcherModule } from '@hookbase/dispatcher';
import { KafkaModule } from '@hookbase/kafka';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/runtime';

void bootstrapService(
  {
    name: 'hookbase-dispatcher',
    imports: () => [
      PersistenceModule.forRoot('hookbase-dispatcher'),
      KafkaModule.forRoot('dispatcher'),
      DispatcherModule,
    ],
  },
  process.env,
);
