import { Logger } from '@nestjs/common';
import { Kafka } from 'kafkajs';
import { HookbaseConfig } from '@hookbase/config';
import { ConsumerClient, ConsumerSettings } from './consumer-client';
import { KafkajsConsumerClient } from './kafkajs-consumer-client';
import {
  createPlatformaticConsumer,
  PlatformaticConsumerClient,
} from './platformatic-consumer-client';

/**
 * A consumer client for one group member, of the library HOOKBASE_KAFKA_CONSUMER names; kafkajs
 * clients come from the service's `kafka`, `@platformatic/kafka` ones carry `clientSuffix`.
 */
export function createConsumerClient(
  config: HookbaseConfig,
  kafka: Kafka,
  clientSuffix: string,
  settings: ConsumerSettings,
): ConsumerClient {
  switch (config.kafka.consumer) {
    case 'kafkajs':
      new Logger(`ConsumerClient:${settings.groupId}`).log(
        `reading ${settings.topic} through kafkajs`,
      );
      return new KafkajsConsumerClient(kafka, settings);
    case 'platformatic': {
      const logger = new Logger(`ConsumerClient:${settings.groupId}`);
      logger.log(`reading ${settings.topic} through @platformatic/kafka`);
      const connection = {
        clientId: `${config.kafka.clientId}-${clientSuffix}`,
        brokers: config.kafka.brokers,
      };
      return new PlatformaticConsumerClient(
        () => createPlatformaticConsumer(connection, settings),
        settings,
        (line) => logger.warn(line),
      );
    }
  }
}
