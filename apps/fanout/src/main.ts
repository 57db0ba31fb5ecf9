import 'reflect-metadata';
import { FanoutModule } from '@hookbase/fanout';
import { KafkaModule } from '@hookbase/kafka';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/web';

void bootstrapService(
  {
    name: 'hookbase-fanout',
    http: false,
    imports: () => [
      PersistenceModule.forRoot('hookbase-fanout'),
      KafkaModule.forRoot('fanout'),
      FanoutModule,
    ],
  },
  process.env,
);
