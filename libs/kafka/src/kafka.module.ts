import { DynamicModule, Global, Logger, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Kafka, logLevel } from 'kafkajs';
// Loaded with the module that makes every service's clients: see the file.
import './request-queue-timer';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { ConsumerAssignmentSource } from './consumer-assignment.source';
import { ConsumerLagSource } from './consumer-lag.source';
import { KafkaProducer } from './kafka-producer';
import { KafkaReadiness } from './kafka-readiness';
import { KafkajsProducerClient } from './kafkajs-producer-client';
import { KAFKA, PRODUCER_CLIENT, TOPICS } from './kafka.tokens';
import {
  createPlatformaticProducer,
  loadPlatformaticKafka,
  PlatformaticProducerClient,
} from './platformatic-producer-client';
import { ProducerClient } from './producer-client';
import { topicNames, TopicNames, topicSpecs } from './topics';

export { KAFKA, PRODUCER_CLIENT, TOPICS } from './kafka.tokens';

const LEVELS = {
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.WARN,
  debug: logLevel.INFO,
};

export function createKafka(config: HookbaseConfig, clientSuffix: string): Kafka {
  const logger = new Logger('kafkajs');
  return new Kafka({
    clientId: `${config.kafka.clientId}-${clientSuffix}`,
    brokers: config.kafka.brokers,
    logLevel: LEVELS[config.logLevel],
    // kafkajs's entries go to the service's logger as they are (message and fields), so they
    // come out in the same format as every other line, under kafkajs's own namespace.
    logCreator: () => (entry) => {
      const { message, ...fields } = entry.log;
      const line = { message, namespace: entry.namespace, kafka: fields };
      if (entry.level <= logLevel.ERROR) logger.error(line);
      else if (entry.level === logLevel.WARN) logger.warn(line);
      else logger.log(line);
    },
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
  });
}

/**
 * Creates the installation's topics when missing, with the configured partitions and replication
 * (HOOKBASE_*_PARTITIONS, HOOKBASE_KAFKA_REPLICATION_FACTOR); safe to call from every service at
 * boot. Answers the topics it created. An existing topic is left as it is.
 */
export async function ensureTopics(
  kafka: Kafka,
  prefix: string,
  settings: HookbaseConfig['kafka']['topics'] = { partitions: {}, replicationFactor: -1 },
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topicSpecs(prefix, settings.partitions).filter(
      (spec) => !existing.has(spec.name),
    );
    if (missing.length === 0) return [];
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((spec) => ({
        topic: spec.name,
        numPartitions: spec.partitions,
        replicationFactor: settings.replicationFactor,
        configEntries: Object.entries(spec.config).map(([name, value]) => ({ name, value })),
      })),
    });
    return missing.map((spec) => spec.name);
  } catch (error) {
    // Another service created them between our list and create.
    if (!/already exists/i.test((error as Error).message)) throw error;
    return [];
  } finally {
    await admin.disconnect();
  }
}

/**
 * The producer client HOOKBASE_KAFKA_PRODUCER names; its clients carry the process's suffix. The
 * library it needs is loaded here, at boot (`load`), so that no send waits for it.
 */
export function createProducerClient(
  config: HookbaseConfig,
  kafka: Kafka,
  clientSuffix: string,
  load: () => unknown = loadPlatformaticKafka,
): ProducerClient {
  switch (config.kafka.producer) {
    case 'kafkajs':
      new Logger('KafkaProducer').log('producing through kafkajs');
      return new KafkajsProducerClient(kafka);
    case 'platformatic': {
      const logger = new Logger('KafkaProducer');
      load();
      logger.log('producing through @platformatic/kafka');
      const settings = {
        clientId: `${config.kafka.clientId}-${clientSuffix}`,
        brokers: config.kafka.brokers,
      };
      return new PlatformaticProducerClient((topic) =>
        createPlatformaticProducer(settings, topic, (line) => logger.warn(line)),
      );
    }
  }
}

@Global()
@Module({})
export class KafkaModule {
  static forRoot(clientSuffix: string): DynamicModule {
    return {
      module: KafkaModule,
      imports: [DiscoveryModule],
      providers: [
        {
          provide: KAFKA,
          useFactory: async (config: HookbaseConfig) => {
            const kafka = createKafka(config, clientSuffix);
            await ensureTopics(kafka, config.kafka.topicPrefix, config.kafka.topics);
            return kafka;
          },
          inject: [HOOKBASE_CONFIG],
        },
        {
          provide: TOPICS,
          useFactory: (config: HookbaseConfig): TopicNames => topicNames(config.kafka.topicPrefix),
          inject: [HOOKBASE_CONFIG],
        },
        {
          provide: PRODUCER_CLIENT,
          useFactory: (config: HookbaseConfig, kafka: Kafka): ProducerClient =>
            createProducerClient(config, kafka, clientSuffix),
          inject: [HOOKBASE_CONFIG, KAFKA],
        },
        KafkaProducer,
        KafkaReadiness,
        ConsumerLagSource,
        ConsumerAssignmentSource,
      ],
      exports: [KAFKA, TOPICS, KafkaProducer],
    };
  }
}
