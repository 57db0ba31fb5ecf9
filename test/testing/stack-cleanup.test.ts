import { Kafka, logLevel } from 'kafkajs';
import { startStack, testEnvironment } from '@hookbase/testing';

// A test's stack leaves nothing behind on the shared broker: its topics go with it, as its
// database does (libs/testing/src/stack.ts).
describe("a test stack's topics", () => {
  const kafka = new Kafka({
    clientId: 'stack-cleanup-test',
    brokers: testEnvironment().kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const topicsUnder = async (prefix: string) => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`)).sort();
    } finally {
      await admin.disconnect();
    }
  };

  it('exist while it runs and are deleted when it stops', async () => {
    const stack = await startStack();
    const prefix = stack.topicPrefix;
    try {
      expect(await topicsUnder(prefix)).toEqual(
        ['deliveries', 'dlq', 'events', 'events.invalid'].map((name) => `${prefix}.${name}`),
      );
    } finally {
      await stack.stop();
    }
    expect(await topicsUnder(prefix)).toEqual([]);
  });
});
