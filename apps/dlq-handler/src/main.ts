import '@hookbase/runtime/source-maps';
import 'reflect-metadata';
import { DlqModule } from '@hookbase/dlq';
import { KafkaModule } from '@hookbase/kafka';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/runtime';

void bootstrapService(
  {
    name: 'hookbase-dlq-handler',
    imports: () => [
      PersistenceModule.forRoot('hookbase-dlq-handler'),
      KafkaModule.forRoot('dlq'),
      DlqModule,
    ],
  },
  process.env,
);
