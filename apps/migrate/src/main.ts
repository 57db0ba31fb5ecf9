import '@hookbase/runtime/source-maps';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createKafka, ensureTopics } from '@hookbase/kafka';
import { PersistenceModule } from '@hookbase/persistence';
import { bootstrapService } from '@hookbase/runtime';

/**
 * Prepares an installation and exits: applies the PostgreSQL migrations and creates the Kafka
 * topics with the configured partitions and replication. The Helm chart runs it as a
 * pre-install/pre-upgrade Job, so the services can run with HOOKBASE_RUN_MIGRATIONS=false.
 * Exit 0 when done, 1 when something failed (the Job then retries), 78 on bad configuration.
 */
async function main(): Promise<void> {
  const logger = new Logger('hookbase-migrate');
  // Migrations run as the persistence module connects (whatever HOOKBASE_RUN_MIGRATIONS says).
  const { app, config } = await bootstrapService(
    {
      name: 'hookbase-migrate',
      imports: () => [PersistenceModule.forRoot('hookbase-migrate')],
    },
    { ...process.env, HOOKBASE_RUN_MIGRATIONS: 'true' },
  );
  const created = await ensureTopics(
    createKafka(config, 'migrate'),
    config.kafka.topicPrefix,
    config.kafka.topics,
  );
  logger.log(
    created.length > 0 ? `created topics ${created.join(', ')}` : 'every topic already exists',
  );
  await app.close();
  logger.log('installation ready: migrations applied, topics in place');
  process.exit(0);
}

main().catch((error: Error) => {
  new Logger('hookbase-migrate').error(`failed: ${error.message}`);
  process.exit(1);
});
