import {
  DynamicModule,
  Global,
  Inject,
  Logger,
  Module,
  OnApplicationShutdown,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { Backoff, backoffDelay } from '@hookbase/domain';
import { createDataSource, runMigrations } from './data-source';
import { DatabasePoolSource } from './database-pool.source';
import { DeliveryBacklogSource } from './delivery-backlog.source';
import { DatabaseReadiness } from './database-readiness';
import { EndpointSecretSealer, SECRET_SEALER, type SecretSealer } from './endpoint-secret-sealer';
import { ApiKeyRepository } from './repositories/api-key.repository';
import { ApplicationRepository } from './repositories/application.repository';
import { DlqRepository } from './repositories/dlq.repository';
import { EndpointRepository } from './repositories/endpoint.repository';
import { RecipientRepository } from './repositories/recipient.repository';
import { EventRepository } from './repositories/event.repository';
import { EventTypeRepository } from './repositories/event-type.repository';
import { EventTypeCatalog } from './event-type-catalog';
import { FifoEpisodeRepository } from './repositories/fifo-episode.repository';
import { FifoLaneRepository } from './repositories/fifo-lane.repository';
import { IdempotencyRepository } from './repositories/idempotency.repository';
import { InvalidEventRepository } from './repositories/invalid-event.repository';
import { MessageRepository } from './repositories/message.repository';
import { OperationalOutboxRepository } from './repositories/operational-outbox.repository';
import { OrganizationRepository } from './repositories/organization.repository';
import { PollLogRepository } from './repositories/poll-log.repository';
import { PortalTokenRepository } from './repositories/portal-token.repository';
import { RetentionRepository } from './repositories/retention.repository';

const REPOSITORIES = [
  ApiKeyRepository,
  ApplicationRepository,
  DlqRepository,
  EndpointRepository,
  EventRepository,
  EventTypeRepository,
  FifoEpisodeRepository,
  FifoLaneRepository,
  IdempotencyRepository,
  InvalidEventRepository,
  MessageRepository,
  OperationalOutboxRepository,
  OrganizationRepository,
  PollLogRepository,
  PortalTokenRepository,
  RecipientRepository,
  RetentionRepository,
];

const logger = new Logger('Persistence');

/** Between tries at boot: 500 ms more each time, at most 5 s. */
const CONNECT_BACKOFF: Backoff = { baseMs: 500, maxMs: 5_000, growth: 'linear' };

/** Connects with patience at boot: PostgreSQL may still be starting beside us. */
async function connect(
  config: HookbaseConfig,
  name: string,
  secretSealer: SecretSealer,
): Promise<DataSource> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    const dataSource = createDataSource({ ...config.database, applicationName: name });
    try {
      await dataSource.initialize();
      if (config.database.runMigrations) {
        const applied = await runMigrations(dataSource, { secretSealer });
        if (applied > 0) logger.log(`applied ${applied} migration(s)`);
      }
      return dataSource;
    } catch (error) {
      if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
      if (Date.now() > deadline) throw error;
      logger.warn(`PostgreSQL not ready (attempt ${attempt}): ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(CONNECT_BACKOFF, attempt)));
    }
  }
}

@Global()
@Module({})
export class PersistenceModule implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  static forRoot(applicationName = 'hookbase'): DynamicModule {
    return {
      module: PersistenceModule,
      providers: [
        {
          provide: SECRET_SEALER,
          useFactory: (config: HookbaseConfig): SecretSealer => {
            if (!config.credentials.key) {
              logger.warn(
                'HOOKBASE_CREDENTIALS_KEY is not set: endpoint signing secrets are stored in plain ' +
                  'text (a production installation refuses to start without it)',
              );
            }
            return new EndpointSecretSealer(config.credentials);
          },
          inject: [HOOKBASE_CONFIG],
        },
        {
          provide: DataSource,
          useFactory: (config: HookbaseConfig, sealer: SecretSealer) =>
            connect(config, applicationName, sealer),
          inject: [HOOKBASE_CONFIG, SECRET_SEALER],
        },
        ...REPOSITORIES,
        EventTypeCatalog,
        DatabaseReadiness,
        DatabasePoolSource,
        DeliveryBacklogSource,
      ],
      exports: [DataSource, SECRET_SEALER, ...REPOSITORIES, EventTypeCatalog],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
