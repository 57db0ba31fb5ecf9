import { KafkaProducer, topicNames } from '@hookbase/kafka';
import { MessageRepository } from '@hookbase/persistence';
import { DeadLetterService } from './dead-letter.service';
import { PendingDelivery } from './pending-delivery';

const deliveryOf = (messageId: string, attemptsMade = 0): PendingDelivery => ({
  messageId,
  webhookId: messageId,
  source: 'new',
  eventId: 'evt_1',
  organizationId: 'org_a',
  endpointId: 'ep_1',
  eventType: 'order.created',
  payload: {},
  acceptedAt: new Date(),
  attemptsMade,
});

function service(options: { send?: () => Promise<void> } = {}) {
  const log: string[] = [];
  const sent: { topic: string; records: { key: string; value: Record<string, unknown> }[] }[] = [];
  const statuses: { ids: readonly string[]; status: string }[] = [];
  const producer = {
    send: async (topic: string, messages: { key: string; value: string }[]) => {
      log.push('dlq');
      await options.send?.();
      sent.push({
        topic,
        records: messages.map((m) => ({ key: m.key, value: JSON.parse(m.value) })),
      });
    },
  } as unknown as KafkaProducer;
  const messages = {
    ...Object.fromEntries(
      (['cancelled', 'expired', 'skipped'] as const).map((status) => [
        { cancelled: 'cancel', expired: 'expire', skipped: 'skip' }[status],
        async (ids: readonly string[]) => {
          log.push('status');
          statuses.push({ ids, status });
        },
      ]),
    ),
  } as unknown as MessageRepository;
  return {
    deadLetters: new DeadLetterService(topicNames('unit'), producer, messages),
    log,
    sent,
    statuses,
  };
}

describe('DeadLetterService', () => {
  it('sends the DLQ records, in one send, before it writes the final status', async () => {
    const { deadLetters, log, sent, statuses } = service();
    await deadLetters.deadLetter(
      [deliveryOf('msg_1', 2), deliveryOf('msg_2')],
      'endpoint_deleted',
      'cancelled',
    );
    expect(log).toEqual(['dlq', 'status']);
    expect(sent).toHaveLength(1);
    expect(sent[0].topic).toBe(topicNames('unit').dlq);
    expect(sent[0].records).toEqual([
      {
        key: 'ep_1',
        value: {
          messageId: 'msg_1',
          organizationId: 'org_a',
          endpointId: 'ep_1',
          eventId: 'evt_1',
          eventType: 'order.created',
          reason: 'endpoint_deleted',
          attempts: 2,
          lastError: null,
          lastResponseStatus: null,
          deadLetteredAt: expect.any(String),
        },
      },
      expect.objectContaining({ key: 'ep_1', value: expect.objectContaining({ attempts: 0 }) }),
    ]);
    expect(statuses).toEqual([{ ids: ['msg_1', 'msg_2'], status: 'cancelled' }]);
  });

  it('does nothing for no messages', async () => {
    const { deadLetters, log } = service();
    await deadLetters.deadLetter([], 'circuit_open', 'skipped');
    expect(log).toEqual([]);
  });

  it('writes no status when the DLQ send fails (the messages are settled again later)', async () => {
    const { deadLetters, statuses } = service({
      send: async () => {
        throw new Error('kafka down');
      },
    });
    await expect(
      deadLetters.deadLetter([deliveryOf('msg_1')], 'max_age', 'expired'),
    ).rejects.toThrow('kafka down');
    expect(statuses).toEqual([]);
  });
});
