import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

const RETRY_DELAY_MS = 2_000;

/** A retry scheduled before a crash fires after it, on time, from the PostgreSQL schedule. */
describe('a scheduled retry across a restart', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith((_, index) => (index === 0 ? { status: 503 } : { status: 200 }));
    stack = await startStack({
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_KAFKA_SESSION_TIMEOUT_MS: '6000',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('survives SIGKILL and fires at its time', async () => {
    const { organizationId, apiKey, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const endpoint = await client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/r`,
      retry: { delaysMs: [0, RETRY_DELAY_MS], maxAgeMs: 60_000 },
    });
    expect(endpoint.status).toBe(201);
    await client.post('/v1/events', { eventType: 'later', payload: {} });
    const scheduled = await pollUntil(
      async () =>
        (await client.get(`${org}/messages?status=awaiting_retry`)).body.data[0] as
          { id: string; nextAttemptAt: string } | undefined,
      { description: 'the retry scheduled' },
    );
    await stack.process.kill();
    const { url } = await stack.startAnother();

    await pollUntil(() => receiver.requests.length === 2, {
      timeoutMs: 30_000,
      description: 'the second attempt after the restart',
    });
    const [first, second] = receiver.requests;
    expect(second.headers['hookbase-attempt']).toBe('2');
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    // Not before its time (jitter is at most 10 %), and not long after it.
    expect(second.receivedAt).toBeGreaterThanOrEqual(
      new Date(scheduled.nextAttemptAt).getTime() - 5,
    );
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(RETRY_DELAY_MS * 0.9 - 5);
    // The attempt is recorded just after the receiver answered: wait for it.
    const message = await pollUntil(
      async () => {
        const survivor = await fetch(`${url}${org}/messages/${scheduled.id}`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        const data = ((await survivor.json()) as { data: { status: string } }).data;
        return data.status === 'succeeded' ? data : undefined;
      },
      { description: 'the message recorded as succeeded' },
    );
    expect(message).toMatchObject({ status: 'succeeded', attempts: 2 });
  });
});
