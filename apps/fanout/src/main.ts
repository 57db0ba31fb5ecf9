import '@hookbase/runtime/source-maps';
import 'reflect-metadata';
import { FanoutModule } from '@hookbase/fanout';
import { KafkaModule } from '@hookbase/kafka';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/runtime';

void bootstrapService(
  {
    name: 'hookbase-fanout',
    imports: () => [
      PersistenceModule.forRoot('hookbase-fanout'),
      KafkaModule.forRoot('fanout'),
      FanoutModule,
    ],
  },
  process.env,
);
