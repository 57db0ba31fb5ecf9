import { createTenant, pollUntil, ReceivedRequest } from '@hookbase/testing';
import { laneSuite, seeded } from './lane-suite';

const ENDPOINTS = 20;
const EVENTS = 8;

/**
 * A failed attempt is counted before the lane retries: each message of several FIFO endpoints
 * whose receivers answer 503 to its first request and 200 to the next is sent exactly as attempt
 * 1 then attempt 2, never attempt 1 twice, and each lane keeps its order.
 */
describe('FIFO retry numbering', () => {
  /** `path webhook-id` of the messages that have had their 503. */
  const failedOnce = new Set<string>();
  /** `path webhook-id` of the messages answered 200. */
  const delivered = new Set<string>();
  const random = seeded(20261202);
  /**
   * How long the receiver takes to answer: spread just below the time after which a lane shows its
   * head as in flight (50 ms), so that this write and the attempt's record often meet.
   */
  const answerDelayMs = () => 40 + Math.floor(random() * 12);

  const suite = laneSuite((request) => {
    const key = messageKey(request);
    const delayMs = answerDelayMs();
    if (failedOnce.has(key)) {
      delivered.add(key);
      return { status: 200, delayMs };
    }
    failedOnce.add(key);
    return { status: 503, delayMs };
  });

  it(`sends each message of ${ENDPOINTS} lanes as attempt 1 (503) then attempt 2 (200), in order`, async () => {
    const { stack, receiver, receiverUrl } = suite;
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const endpointIds: string[] = [];
    for (let endpoint = 0; endpoint < ENDPOINTS; endpoint++) {
      const created = await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/lane-${endpoint}`,
        fifoEnabled: true,
        retry: { delaysMs: [0, 10, 10, 10], maxAgeMs: 600_000 },
      });
      expect(created.status).toBe(201);
      endpointIds.push(created.body.data.id);
    }
    for (let n = 0; n < EVENTS; n++) {
      const sent = await client.post('/v1/events', { eventType: 'numbered', payload: { n } });
      expect(sent.status).toBe(202);
    }

    // Every message answered 200 once, and every lane empty: nothing more is on its way.
    await pollUntil(
      async () => {
        if (delivered.size < ENDPOINTS * EVENTS) return false;
        for (const endpointId of endpointIds) {
          const state = (await client.get(`${org}/webhook-endpoints/${endpointId}/fifo-state`)).body
            .data;
          if (state.queueDepth !== 0) return false;
        }
        return true;
      },
      { timeoutMs: 90_000, intervalMs: 200, description: 'every message delivered, lanes empty' },
    );

    const byMessage = new Map<string, ReceivedRequest[]>();
    for (const request of receiver.requests) {
      const key = messageKey(request);
      byMessage.set(key, [...(byMessage.get(key) ?? []), request]);
    }
    expect(byMessage.size).toBe(ENDPOINTS * EVENTS);
    const numbering = [...byMessage.entries()]
      .map(([key, requests]) => ({
        key,
        attempts: requests.map((r) => r.headers['hookbase-attempt']),
      }))
      .filter(({ attempts }) => attempts.join() !== '1,2');
    expect(numbering).toEqual([]);

    for (let endpoint = 0; endpoint < ENDPOINTS; endpoint++) {
      const firstSeen: number[] = [];
      const seen = new Set<string>();
      for (const request of receiver.requests) {
        if (request.path !== `/lane-${endpoint}`) continue;
        const id = String(request.headers['webhook-id']);
        if (seen.has(id)) continue;
        seen.add(id);
        firstSeen.push((JSON.parse(request.body) as { n: number }).n);
      }
      expect({ endpoint, firstSeen }).toEqual({
        endpoint,
        firstSeen: Array.from({ length: EVENTS }, (_, n) => n),
      });
    }
  });
});

function messageKey(request: ReceivedRequest): string {
  return `${request.path} ${String(request.headers['webhook-id'])}`;
}
