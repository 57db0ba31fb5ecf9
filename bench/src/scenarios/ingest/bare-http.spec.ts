import { IngestClient } from '../../drivers/ingest-clients';
import { measureBound, startBareServer } from './bare-http';

// The bare HTTP bound's server runs in a process of its own on 127.0.0.1; each case drives it
// briefly with the bench's own REST client, as a step's bound does.
describe('the bare HTTP bound', () => {
  const drive = async (batch: boolean, eventsPerRequest: number) => {
    const server = await startBareServer();
    const publisher = new IngestClient(server.url, 'bare', 2, batch);
    try {
      return await measureBound({
        publisher,
        concurrency: 2,
        eventsPerRequest,
        payloadBytes: 64,
        seconds: 0.3,
      });
    } finally {
      await publisher.close();
      await server.stop();
    }
  };

  it('answers single events 202 with an id each, and counts them per second', async () => {
    const bound = await drive(false, 1);
    expect(bound.unanswered).toBe(0);
    expect(bound.requests).toBeGreaterThan(0);
    // One event a request, over at least the 0.3 s asked.
    expect(bound.perSecond).toBeGreaterThan(0);
    expect(bound.perSecond).toBeLessThanOrEqual(bound.requests / 0.3);
    expect(bound.p99Ms).not.toBeNull();
  });

  it('answers a batch 207 with a result per event, each counted', async () => {
    const bound = await drive(true, 5);
    expect(bound.unanswered).toBe(0);
    expect(bound.perSecond).toBeGreaterThan(bound.requests);
  });

  it('answers 400 to a body that is not what its path takes', async () => {
    const server = await startBareServer();
    const client = new IngestClient(server.url, 'bare', 1);
    try {
      const response = await fetch(`${server.url}/v1/events/batch`, {
        method: 'POST',
        body: JSON.stringify({ eventType: 'x' }),
      });
      expect(response.status).toBe(400);
      const [outcome] = await client.publish([{ eventType: 'x', payload: { s: 1 } }]);
      expect(outcome.kind).toBe('accepted');
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
