import { Logger } from '@nestjs/common';
import { Kafka, logLevel } from 'kafkajs';
import { loadConfig } from '@hookbase/config';
import { KafkajsProducerClient } from './kafkajs-producer-client';
import { createProducerClient } from './kafka.module';
import { PlatformaticProducerClient } from './platformatic-producer-client';

describe('createProducerClient', () => {
  // Never connected: making a client opens no connection.
  const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });

  beforeEach(() => jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('loads @platformatic/kafka when it makes its client (at boot), not on the first send', () => {
    const load = jest.fn();
    const client = createProducerClient(
      loadConfig({ HOOKBASE_KAFKA_PRODUCER: 'platformatic' }),
      kafka,
      'test',
      load,
    );
    expect(client).toBeInstanceOf(PlatformaticProducerClient);
    // Loading takes a few hundred milliseconds in which the process serves nothing: a process's
    // first event would wait for it, and every delivery in flight with it.
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('loads nothing more for kafkajs', () => {
    const load = jest.fn();
    const client = createProducerClient(
      loadConfig({ HOOKBASE_KAFKA_PRODUCER: 'kafkajs' }),
      kafka,
      'test',
      load,
    );
    expect(client).toBeInstanceOf(KafkajsProducerClient);
    expect(load).not.toHaveBeenCalled();
  });
});
