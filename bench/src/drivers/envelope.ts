import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { EventEnvelope, newId } from '@hookbase/domain';
import { benchPayload, EVENT_TYPE } from './publisher';

/**
 * The record Hookbase writes to `<prefix>.events` for a bench event, as a direct producer writes
 * it (docs/schemas/event-envelope.schema.json): keyed by organization id, the envelope as JSON.
 * ingest-kafka produces these; the raw produce baselines send records of the same size, so that
 * "raw" and "accepted" move the same bytes.
 */
export interface EnvelopeRecord {
  eventId: string;
  key: string;
  value: string;
}

export function benchEnvelope(
  organizationId: string,
  seq: number,
  payloadBytes: number,
  atMs: number = Date.now(),
): EnvelopeRecord {
  const envelope: EventEnvelope = {
    id: newId('evt', atMs),
    organizationId,
    eventType: EVENT_TYPE,
    payload: benchPayload(seq, payloadBytes),
    acceptedAt: new Date(atMs).toISOString(),
  };
  return { eventId: envelope.id, key: organizationId, value: JSON.stringify(envelope) };
}

/**
 * A kafkajs client and producer set up as Hookbase's own producer, and as the documented direct
 * producer should be: idempotent, one request in flight, murmur2 partitioner, no compression.
 */
export function hookbaseLikeProducer(brokers: string, clientId: string) {
  const kafka = new Kafka({ clientId, brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  return { kafka, producer };
}
