import { measureBound, startBareIngestServer } from './bounds';
import { BatchRestPublisher, singleEventRest } from '../../drivers/ingest-clients';
import { IngestClient } from '../../drivers/publisher';

// The bench's bare HTTP bound (bounds.ts): a server in a process of its own that
// answers the bench's REST clients as ingest would, so the bound is measured with the very
// clients the steps use.
describe('the bare HTTP bound', () => {
  it('answers single events with 202 and batches with 207, one id per event, and stops', async () => {
    const server = await startBareIngestServer();
    try {
      const single = singleEventRest(new IngestClient(server.url, 'bound', 4));
      const alone = await single.publish([{ eventType: 'bench.event', payload: { s: 1 } }]);
      expect(alone).toEqual([{ kind: 'accepted', eventId: expect.stringMatching(/^evt_/) }]);
      await single.close();

      const batch = new BatchRestPublisher(server.url, 'bound', 2);
      const events = Array.from({ length: 3 }, (_, s) => ({ eventType: 'e', payload: { s } }));
      const outcomes = await batch.publish(events);
      expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted', 'accepted']);
      const ids = outcomes.map((o) => (o.kind === 'accepted' ? o.eventId : ''));
      expect(new Set(ids).size).toBe(3);
      await batch.close();
    } finally {
      await server.stop();
    }
    await expect(
      fetch(`${server.url}/v1/events`, { method: 'POST', body: '{}' }),
    ).rejects.toThrow();
  });

  it('measures events answered per second in a closed loop, per event inside a batch', async () => {
    const server = await startBareIngestServer();
    const publisher = new BatchRestPublisher(server.url, 'bound', 2);
    try {
      const run = await measureBound({
        publisher,
        concurrency: 2,
        eventsPerRequest: 10,
        payloadBytes: 64,
        seconds: 0.5,
      });
      expect(run.unanswered).toBe(0);
      expect(run.requests).toBeGreaterThan(0);
      // Every event of every request was answered: the rate counts events, not requests.
      expect(run.perSecond).toBeGreaterThanOrEqual((run.requests * 10) / 0.6);
      expect(run.p99Ms).not.toBeNull();
    } finally {
      await publisher.close();
      await server.stop();
    }
  });

  it('counts what the server refuses as unanswered', async () => {
    const server = await startBareIngestServer();
    const statuses = new Set<number>();
    // A body without `events` is not a batch: the bare server answers 400, as ingest would.
    const publisher = {
      publish: async (events: readonly unknown[]) => {
        const response = await fetch(`${server.url}/v1/events/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ notEvents: events }),
        });
        await response.text();
        statuses.add(response.status);
        return events.map(() => ({ kind: 'refused' as const, detail: `HTTP ${response.status}` }));
      },
      close: async () => undefined,
    };
    try {
      const run = await measureBound({
        publisher,
        concurrency: 1,
        eventsPerRequest: 2,
        payloadBytes: 16,
        seconds: 0.2,
      });
      expect(run.perSecond).toBe(0);
      expect(run.unanswered).toBe(run.requests * 2);
      expect(run.requests).toBeGreaterThan(0);
      expect([...statuses]).toEqual([400]);
    } finally {
      await server.stop();
    }
  });
});
