import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/** `GET .../webhook-endpoints/:id/stats`: the last hour of an endpoint's attempts, per minute. */
describe('endpoint statistics', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack();
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('counts succeeded and failed attempts in their minute, with latency and the latest attempts', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const base = `/api/organizations/${organizationId}/webhook-endpoints`;
    // The first attempt of each message fails (503), the retry one second later succeeds.
    const seen = new Set<string>();
    receiver.respondWith((request) => {
      const id = String(request.headers['webhook-id']);
      if (seen.has(id)) return { status: 200, body: 'thanks' };
      seen.add(id);
      return { status: 503, body: 'busy' };
    });
    const endpoint = await client.post(base, {
      url: `${receiverUrl}/stats`,
      retry: { delaysMs: [0, 1000], maxAgeMs: 600_000 },
    });
    expect(endpoint.status).toBe(201);
    const endpointId: string = endpoint.body.data.id;
    const empty = await client.get(`${base}/${endpointId}/stats`);
    expect(empty.status).toBe(200);
    expect(empty.body.data.minutes).toHaveLength(60);
    expect(empty.body.data).toMatchObject({
      succeeded: 0,
      failed: 0,
      successRate: null,
      lastAttemptAt: null,
      recentAttempts: [],
    });

    for (let i = 0; i < 3; i += 1) {
      const published = await client.post('/v1/events', {
        eventType: 'stats.test',
        payload: { i },
      });
      expect(published.status).toBe(202);
    }
    const stats = await pollUntil(
      async () => {
        const response = await client.get(`${base}/${endpointId}/stats`);
        return response.body.data?.succeeded === 3 && response.body.data;
      },
      { description: 'three succeeded attempts in the statistics', timeoutMs: 60_000 },
    );
    expect(stats.failed).toBe(3);
    expect(stats.successRate).toBe(0.5);
    const minutes = stats.minutes as { succeeded: number; failed: number; p50Ms: number | null }[];
    expect(minutes.reduce((sum, m) => sum + m.succeeded + m.failed, 0)).toBe(6);
    expect(minutes.some((m) => m.succeeded > 0 && m.p50Ms !== null && m.p50Ms >= 0)).toBe(true);
    expect(stats.recentAttempts).toHaveLength(6);
    expect(stats.recentAttempts[0]).toMatchObject({ outcome: 'succeeded', responseStatus: 200 });
    expect(
      stats.recentAttempts.filter((a: { responseStatus: number }) => a.responseStatus === 503),
    ).toHaveLength(3);
    expect(stats.lastAttemptAt).toBe(stats.recentAttempts[0].startedAt);
  });

  it("answers 404 for another organization's endpoint, never its numbers", async () => {
    const owner = await createTenant(stack.url, stack.adminToken);
    const other = await createTenant(stack.url, stack.adminToken);
    const created = await owner.client.post(
      `/api/organizations/${owner.organizationId}/webhook-endpoints`,
      { url: `${receiverUrl}/x` },
    );
    const response = await other.client.get(
      `/api/organizations/${other.organizationId}/webhook-endpoints/${created.body.data.id}/stats`,
    );
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('ENDPOINT_NOT_FOUND');
  });
});
