import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';

/** A record as read back from a topic. */
export interface TopicRecord {
  partition: number;
  key: Buffer | null;
  value: Buffer | null;
}

/**
 * Every record of `topic` written so far (up to each partition's high watermark when called),
 * read by a consumer group of its own from the beginning.
 */
export async function topicRecords(brokers: string, topic: string): Promise<TopicRecord[]> {
  const kafka = new Kafka({
    clientId: 'topic-reader',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const wanted = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  const consumer = kafka.consumer({ groupId: `read-${randomBytes(6).toString('hex')}` });
  const records: TopicRecord[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      if (wanted === 0) return resolve();
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            records.push({ partition, key: message.key, value: message.value });
            if (records.length >= wanted) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}
