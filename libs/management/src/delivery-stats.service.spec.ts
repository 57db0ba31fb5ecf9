import { AttemptEntity, MessageRepository } from '@hookbase/persistence';
import { DeliveryStatsService } from './delivery-stats.service';

/** The store seam replaced: what the service asks for and how it adds up the answer. */
function fakeMessages(minutes: unknown[], recent: AttemptEntity[]) {
  const calls: { method: string; endpointIds: readonly string[] }[] = [];
  const messages = {
    attemptMinutes: async (endpointIds: readonly string[]) => {
      calls.push({ method: 'attemptMinutes', endpointIds });
      return minutes;
    },
    recentAttempts: async (endpointIds: readonly string[]) => {
      calls.push({ method: 'recentAttempts', endpointIds });
      return recent;
    },
  } as unknown as MessageRepository;
  return { messages, calls };
}

const NOW = new Date('2026-12-01T12:30:30Z');

describe('DeliveryStatsService', () => {
  it('asks the store for all the endpoints at once and charts the last hour', async () => {
    const attempt = Object.assign(new AttemptEntity(), {
      id: 'att_1',
      messageId: 'msg_1',
      attemptNumber: 1,
      startedAt: new Date('2026-12-01T12:30:10Z'),
      durationMs: 12,
      outcome: 'succeeded',
      responseStatus: 200,
      responseExcerpt: 'ok',
      error: null,
    });
    const { messages, calls } = fakeMessages(
      [
        {
          minute: new Date('2026-12-01T12:30:00Z'),
          succeeded: 3,
          failed: 1,
          p50Ms: 12,
          maxMs: 40,
        },
      ],
      [attempt],
    );
    const stats = await new DeliveryStatsService(messages).lastHour(['ep_a', 'ep_b'], NOW);
    expect(calls.map((c) => [c.method, c.endpointIds])).toEqual([
      ['attemptMinutes', ['ep_a', 'ep_b']],
      ['recentAttempts', ['ep_a', 'ep_b']],
    ]);
    expect(stats).toMatchObject({
      from: '2026-12-01T11:31:00.000Z',
      to: '2026-12-01T12:31:00.000Z',
      succeeded: 3,
      failed: 1,
      successRate: 0.75,
      lastAttemptAt: '2026-12-01T12:30:10.000Z',
      recentAttempts: [expect.objectContaining({ messageId: 'msg_1', responseStatus: 200 })],
    });
    expect(stats.minutes).toHaveLength(60);
  });

  it('answers an empty hour for no endpoints without asking the store', async () => {
    const { messages, calls } = fakeMessages([], []);
    const stats = await new DeliveryStatsService(messages).lastHour([], NOW);
    expect(calls).toEqual([]);
    expect(stats).toMatchObject({
      succeeded: 0,
      failed: 0,
      successRate: null,
      lastAttemptAt: null,
      recentAttempts: [],
    });
    expect(stats.minutes.every((m) => m.succeeded === 0 && m.failed === 0)).toBe(true);
  });
});
