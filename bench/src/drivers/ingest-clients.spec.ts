import { Ledger } from '../core/ledger';
import {
  batchOutcomes,
  EventPublisher,
  publishGroupInto,
  PublishOutcome,
  refusalDetail,
} from './ingest-clients';

describe('refusalDetail', () => {
  it('names the status and the Hookbase code when the body has one', () => {
    expect(refusalDetail(400, { error: { code: 'VALIDATION_FAILED', message: 'x' } })).toBe(
      'HTTP 400 VALIDATION_FAILED',
    );
    expect(refusalDetail(502, null)).toBe('HTTP 502');
    expect(refusalDetail(503, { error: {} })).toBe('HTTP 503');
  });
});

describe('batchOutcomes', () => {
  it('reads one result per event, in order, each on its own', () => {
    const body = JSON.stringify({
      data: [
        { status: 202, data: { id: 'evt_a' } },
        { status: 400, error: { code: 'VALIDATION_FAILED', message: 'eventType' } },
        { status: 202, data: { id: 'evt_c' } },
      ],
    });
    expect(batchOutcomes(207, body, 3)).toEqual([
      { kind: 'accepted', eventId: 'evt_a' },
      { kind: 'refused', detail: 'HTTP 400 VALIDATION_FAILED' },
      { kind: 'accepted', eventId: 'evt_c' },
    ]);
  });

  it('refuses every event when the request as a whole is refused', () => {
    const body = JSON.stringify({ error: { code: 'UNAUTHORIZED', message: 'no' } });
    expect(batchOutcomes(401, body, 2)).toEqual([
      { kind: 'refused', detail: 'HTTP 401 UNAUTHORIZED' },
      { kind: 'refused', detail: 'HTTP 401 UNAUTHORIZED' },
    ]);
    expect(batchOutcomes(413, 'too large', 1)).toEqual([{ kind: 'refused', detail: 'HTTP 413' }]);
  });

  it('fails every event of a 207 that does not answer each one', () => {
    const short = JSON.stringify({ data: [{ status: 202, data: { id: 'evt_a' } }] });
    expect(batchOutcomes(207, short, 2).map((o) => o.kind)).toEqual(['failed', 'failed']);
    expect(batchOutcomes(207, 'not json', 1)[0]).toEqual({
      kind: 'failed',
      detail: 'HTTP 207 with no results for 1 events',
    });
    const noId = JSON.stringify({ data: [{ status: 202, data: {} }] });
    expect(batchOutcomes(207, noId, 1)[0].kind).toBe('failed');
  });
});

describe('publishGroupInto', () => {
  const fake = (outcomes: PublishOutcome[]): EventPublisher => ({
    publish: async () => outcomes,
    close: async () => undefined,
  });
  const event = { eventType: 'bench.event', payload: { s: 0 } };

  it('writes every event of the call to the ledger with the answer it got', async () => {
    const ledger = new Ledger('test');
    for (const seq of [0, 1, 2]) ledger.schedule(seq, 0, new Set());
    const latency = await publishGroupInto(
      ledger,
      fake([
        { kind: 'accepted', eventId: 'evt_0' },
        { kind: 'refused', detail: 'HTTP 400 VALIDATION_FAILED' },
        { kind: 'failed', detail: 'ECONNRESET' },
      ]),
      [0, 1, 2],
      [event, event, event],
    );
    expect(latency).toBeGreaterThanOrEqual(0);
    const { events, refusals } = ledger.reconcile();
    expect(events).toMatchObject({ sent: 3, accepted: 1, refused: 1, failed: 1, unanswered: 0 });
    expect(refusals).toEqual({ 'HTTP 400 VALIDATION_FAILED': 1, ECONNRESET: 1 });
    expect(ledger.knowsEvent('evt_0')).toBe(true);
  });

  it('counts an event the publisher gave no outcome for as failed, never unanswered', async () => {
    const ledger = new Ledger('test');
    for (const seq of [5, 6]) ledger.schedule(seq, 0, new Set());
    await publishGroupInto(
      ledger,
      fake([{ kind: 'accepted', eventId: 'evt_5' }]),
      [5, 6],
      [event, event],
    );
    expect(ledger.reconcile().events).toMatchObject({ accepted: 1, failed: 1, unanswered: 0 });
  });
});
