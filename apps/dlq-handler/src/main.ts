import 'reflect-metadata';
import { DlqModule } from '@hookbase/dlq';
import { KafkaModule } from '@hookbase/kafka';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/web';

void bootstrapService(
  {
    name: 'hookbase-dlq-handler',
    http: false,
    imports: () => [
      PersistenceModule.forRoot('hookbase-dlq-handler'),
      KafkaModule.forRoot('dlq'),
      DlqModule,
    ],
  },
  process.env,
);
