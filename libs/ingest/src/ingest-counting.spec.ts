import { DomainError } from '@hookbase/domain';
import { IngestMetrics } from '@hookbase/runtime';
import { countedBatch, countedPublish, refusalReason } from './ingest-counting';

function recorder() {
  const calls: string[] = [];
  const metrics: IngestMetrics = {
    publishFinished: () => undefined,
    eventsAccepted: (surface, count) => calls.push(`accepted ${surface} ${count}`),
    eventsRefused: (surface, reason, count) => calls.push(`refused ${surface} ${reason} ${count}`),
  };
  return { metrics, calls };
}

describe('refusalReason', () => {
  it('is the error code of a domain error, INTERNAL for anything else', () => {
    expect(refusalReason(new DomainError('RATE_LIMITED', 'slow down'))).toBe('RATE_LIMITED');
    expect(refusalReason(new TypeError('boom'))).toBe('INTERNAL');
  });
});

describe('countedPublish', () => {
  it('counts an accepted event and passes its result on', async () => {
    const { metrics, calls } = recorder();
    await expect(countedPublish(metrics, 'rest', async () => 'ok')).resolves.toBe('ok');
    expect(calls).toEqual(['accepted rest 1']);
  });

  it('counts a refused event by its code and rethrows', async () => {
    const { metrics, calls } = recorder();
    const error = new DomainError('SERVICE_UNAVAILABLE', 'later');
    await expect(
      countedPublish(metrics, 'grpc', async () => {
        throw error;
      }),
    ).rejects.toBe(error);
    expect(calls).toEqual(['refused grpc SERVICE_UNAVAILABLE 1']);
  });
});

describe('countedBatch', () => {
  const event = { id: 'evt_1', eventType: 't', acceptedAt: '', duplicate: false };

  it('counts each outcome of a batch, refusals grouped by reason', async () => {
    const { metrics, calls } = recorder();
    await countedBatch(metrics, 'batch', [1, 2, 3, 4], async () => [
      { kind: 'published', event },
      { kind: 'refused', error: new DomainError('VALIDATION_FAILED', 'bad') },
      { kind: 'published', event },
      { kind: 'refused', error: new DomainError('VALIDATION_FAILED', 'bad') },
    ]);
    expect(calls).toEqual(['accepted batch 2', 'refused batch VALIDATION_FAILED 2']);
  });

  it('counts every event of a batch refused as a whole, or one without a list', async () => {
    const { metrics, calls } = recorder();
    const refuse = async () => {
      throw new DomainError('RATE_LIMITED', 'slow down');
    };
    await expect(countedBatch(metrics, 'batch', [1, 2, 3], refuse)).rejects.toThrow('slow down');
    await expect(countedBatch(metrics, 'grpc', 'not a list', refuse)).rejects.toThrow();
    expect(calls).toEqual(['refused batch RATE_LIMITED 3', 'refused grpc RATE_LIMITED 1']);
  });
});
