import { loadConfig } from '@hookbase/config';
import { DomainError, PublishEventInput } from '@hookbase/domain';
import { ApiKeyPrincipal, RequestLimits } from '@hookbase/auth';
import { PublishBatch } from './publish-batch.use-case';
import { PublishedEvent, PublishEvent } from './publish-event.use-case';

const key: ApiKeyPrincipal = { keyId: 'key_1', organizationId: 'org_1', plan: 'pro' };

function setUp(maxBatchEvents = 3) {
  const config = loadConfig({ HOOKBASE_MAX_BATCH_EVENTS: String(maxBatchEvents) });
  const taken: number[] = [];
  const limits = {
    takeIngest: async (_key: ApiKeyPrincipal, events: number) => {
      taken.push(events);
    },
  } as unknown as RequestLimits;
  const published: { organizationId: string; input: PublishEventInput }[] = [];
  const calls: number[] = [];
  const publishEvent = {
    executeAll: async (organizationId: string, inputs: PublishEventInput[]) => {
      calls.push(inputs.length);
      return inputs.map((input) => {
        if (input.eventType === 'broken') {
          return { kind: 'refused', error: new DomainError('SERVICE_UNAVAILABLE', 'down') };
        }
        published.push({ organizationId, input });
        const event: PublishedEvent = {
          id: `evt_${input.eventType}`,
          eventType: input.eventType,
          acceptedAt: 'now',
          duplicate: false,
        };
        return { kind: 'published', event };
      });
    },
  } as unknown as PublishEvent;
  return {
    batch: new PublishBatch(publishEvent, limits, config),
    taken,
    published,
    limits,
    calls,
  };
}

const toInput = (event: string): PublishEventInput => {
  if (event === 'invalid') throw new DomainError('VALIDATION_FAILED', 'bad event');
  return { eventType: event, payload: {} };
};
const sizeHint = (max: number) => `send 1 to ${max}`;

describe('PublishBatch', () => {
  it('publishes each event for the key organization, outcomes in the order sent', async () => {
    const { batch, taken, published, calls } = setUp();
    const outcomes = await batch.execute({ key, events: ['a', 'b', 'c'], toInput, sizeHint });
    expect(calls).toEqual([3]);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual([
      'published',
      'published',
      'published',
    ]);
    expect(outcomes.map((outcome) => outcome.kind === 'published' && outcome.event.id)).toEqual([
      'evt_a',
      'evt_b',
      'evt_c',
    ]);
    expect(published.every((entry) => entry.organizationId === 'org_1')).toBe(true);
    expect(taken).toEqual([3]);
  });

  it('refuses an event on its own, whether its input or its publishing fails', async () => {
    const { batch, published } = setUp();
    const outcomes = await batch.execute({
      key,
      events: ['invalid', 'a', 'broken'],
      toInput,
      sizeHint,
    });
    expect(outcomes[0]).toEqual({ kind: 'refused', error: expect.any(DomainError) });
    expect(outcomes[1]).toMatchObject({ kind: 'published', event: { id: 'evt_a' } });
    expect(outcomes[2].kind === 'refused' && (outcomes[2].error as DomainError).code).toBe(
      'SERVICE_UNAVAILABLE',
    );
    expect(published.map((entry) => entry.input.eventType)).toEqual(['a']);
  });

  it.each([
    ['no list', undefined],
    ['not a list', { a: 1 }],
    ['an empty list', []],
    ['more than the maximum', ['a', 'b', 'c', 'd']],
  ])('refuses %s as VALIDATION_FAILED in the edge words, taking nothing', async (_, events) => {
    const { batch, taken, published } = setUp();
    const refusal = batch.execute({ key, events, toInput, sizeHint });
    await expect(refusal).rejects.toThrow(DomainError);
    await expect(refusal).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'send 1 to 3',
    });
    expect(taken).toEqual([]);
    expect(published).toEqual([]);
  });

  it('publishes nothing when the key ingest budget refuses the batch', async () => {
    const { batch, limits, published } = setUp();
    limits.takeIngest = async () => {
      throw new DomainError('RATE_LIMITED', 'slow down');
    };
    await expect(batch.execute({ key, events: ['a'], toInput, sizeHint })).rejects.toMatchObject({
      code: 'RATE_LIMITED',
    });
    expect(published).toEqual([]);
  });
});
