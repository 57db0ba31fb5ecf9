import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely */

/**
 * `DELETE …/events/:eventId/payload`: the payload is erased everywhere Hookbase stores it; the
 * log keeps its rows and statuses, a replay is refused, and what still waited is dead-lettered.
 */
describe('payload purge', () => {
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

  it('erases the payload, keeps the log rows, refuses replay and dead-letters what waited', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const sent = (await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/sent` }))
      .body.data.id;
    const held = (
      await client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/held`,
        status: 'paused',
      })
    ).body.data.id;
    const event = await client.post('/v1/events', {
      eventType: 'customer.deleted',
      payload: { email: 'someone@example.com' },
      idempotencyKey: 'erase-me',
    });
    const eventId = event.body.data.id;
    const delivered = await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${sent}&status=succeeded`)).body.data[0],
      { description: 'the message delivered' },
    );
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${held}&status=awaiting_retry`)).body.data
          .length === 1,
      { description: 'the message held by the paused endpoint' },
    );

    const purged = await client.delete(`${org}/events/${eventId}/payload`);
    expect(purged.status).toBe(200);
    expect(purged.body.data).toEqual({ id: eventId, payloadPurged: true, messagesCancelled: 1 });

    const after = (await client.get(`${org}/events/${eventId}`)).body.data;
    expect(after.payload).toEqual({});
    expect(after.payloadPurgedAt).toEqual(expect.any(String));
    expect(after).toMatchObject({ id: eventId, eventType: 'customer.deleted' });
    expect(JSON.stringify(after)).not.toContain('someone@example.com');
    const statuses = Object.fromEntries(after.messages.map((m: any) => [m.endpointId, m.status]));
    expect(statuses).toEqual({ [sent]: 'succeeded', [held]: 'cancelled' });
    const message = (await client.get(`${org}/messages/${delivered.id}`)).body.data;
    expect(message.attemptHistory).toHaveLength(1);

    const replay = await client.post(`${org}/messages/${delivered.id}/replay`);
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('PAYLOAD_PURGED');
    const entry = (await client.get(`${org}/dlq?endpointId=${held}`)).body.data[0];
    expect(entry).toMatchObject({ reason: 'payload_purged', eventId });
    expect((await client.post(`${org}/dlq/${entry.id}/retry`)).status).toBe(409);

    // The held message is never sent, even once its endpoint resumes.
    await client.patch(`${org}/webhook-endpoints/${held}`, { status: 'active' });
    const probe = await client.post('/v1/events', { eventType: 'probe', payload: {} });
    expect(probe.status).toBe(202);
    await pollUntil(() => receiver.requests.some((r) => r.path === '/held'), {
      description: 'the resumed endpoint receiving the next event',
    });
    const toHeld = receiver.requests.filter((r) => r.path === '/held');
    expect(toHeld.map((r) => JSON.parse(r.body))).toEqual([{}]);
    expect(toHeld.every((r) => r.headers['hookbase-event-type'] === 'probe')).toBe(true);

    // The idempotency key is still the event's, without the payload.
    const again = await client.post('/v1/events', {
      eventType: 'customer.deleted',
      payload: { email: 'someone@example.com' },
      idempotencyKey: 'erase-me',
    });
    expect(again.body.data).toMatchObject({ id: eventId, duplicate: true });
    expect((await client.delete(`${org}/events/evt_${'0'.repeat(26)}/payload`)).status).toBe(404);
  });
});
