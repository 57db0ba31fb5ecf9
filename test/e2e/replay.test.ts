import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/** Replays and DLQ retries send copies at once, keeping the original webhook-id. */
describe('replay and DLQ retry', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let accepting = false;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith(() => (accepting ? { status: 200 } : { status: 410, body: 'gone' }));
    stack = await startStack({
      HOOKBASE_RETRY_POLL_MS: '100',
      // Small bounds, so the continuation and the per-minute budget show with a few messages.
      HOOKBASE_REPLAY_FAILED_MAX_PER_CALL: '2',
      HOOKBASE_REPLAY_FAILED_PER_MINUTE: '4',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('retries a DLQ entry, replays a message, and replays an endpoint’s failures since a time', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const endpoint = await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/in` });
    const endpointId: string = endpoint.body.data.id;

    accepting = false;
    await client.post('/v1/events', { eventType: 'first', payload: { n: 0 } });
    const entry = await pollUntil(
      async () => (await client.get(`${org}/dlq?endpointId=${endpointId}`)).body.data[0],
      { description: 'the first message dead-lettered' },
    );
    expect(entry).toMatchObject({ reason: 'permanent_failure', retriedAt: null });

    accepting = true;
    const retried = await client.post(`${org}/dlq/${entry.id}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body.data).toMatchObject({ replayOf: entry.messageId, eventId: entry.eventId });
    const copyId: string = retried.body.data.id;
    expect(copyId).not.toBe(entry.messageId);
    await pollUntil(
      async () => (await client.get(`${org}/messages/${copyId}`)).body.data.status === 'succeeded',
      { description: 'the DLQ retry copy delivered' },
    );
    const forFirst = receiver.requests.filter((r) => r.headers['hookbase-event-type'] === 'first');
    expect(forFirst.map((r) => r.headers['webhook-id'])).toEqual([
      entry.messageId,
      entry.messageId,
    ]);
    const after = (await client.get(`${org}/dlq?endpointId=${endpointId}`)).body.data[0];
    expect(after).toMatchObject({
      id: entry.id,
      retryMessageId: copyId,
      retriedAt: expect.any(String),
    });

    // Replaying a copy (or a message that succeeded) sends another copy with the same webhook-id.
    const again = await client.post(`${org}/messages/${copyId}/replay`);
    expect(again.status).toBe(202);
    expect(again.body.data.replayOf).toBe(entry.messageId);
    await pollUntil(
      () =>
        receiver.requests.filter((r) => r.headers['hookbase-event-type'] === 'first').length === 3,
      { description: 'the replay delivered' },
    );

    accepting = false;
    const since = new Date().toISOString();
    for (const n of [1, 2, 3])
      await client.post('/v1/events', { eventType: 'later', payload: { n } });
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${endpointId}&status=failed`)).body.data
          .length === 4,
      { description: 'three more failures (four in all)' },
    );
    accepting = true;
    // At most two per call: the answer says where the next call goes on.
    const replayed = await client.post(`${org}/webhook-endpoints/${endpointId}/replay-failed`, {
      since,
    });
    expect(replayed.body).toEqual({ data: { replayed: 2, nextAfter: expect.any(String) } });
    const rest = await client.post(`${org}/webhook-endpoints/${endpointId}/replay-failed`, {
      since,
      after: replayed.body.data.nextAfter,
    });
    expect(rest.body).toEqual({ data: { replayed: 1, nextAfter: null } });
    await pollUntil(
      () =>
        receiver.requests.filter((r) => r.headers['hookbase-event-type'] === 'later' && r.body)
          .length === 6,
      { description: 'the three failures sent again' },
    );
    const later = receiver.requests.filter((r) => r.headers['hookbase-event-type'] === 'later');
    expect(
      later
        .slice(3)
        .map((r) => JSON.parse(r.body).n)
        .sort(),
    ).toEqual([1, 2, 3]);
  });

  it('bounds replay-failed per organization and minute: 429 with Retry-After when used up', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const other = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const endpoint = await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/b` });
    const endpointId: string = endpoint.body.data.id;
    accepting = false;
    for (const n of [1, 2, 3])
      await client.post('/v1/events', { eventType: 'bounded', payload: { n } });
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${endpointId}&status=failed`)).body.data
          .length === 3,
      { description: 'three failed messages' },
    );
    const replay = (body: object) =>
      client.post(`${org}/webhook-endpoints/${endpointId}/replay-failed`, body);
    const first = await replay({});
    expect(first.body.data).toEqual({ replayed: 2, nextAfter: expect.any(String) });
    expect((await replay({ after: first.body.data.nextAfter })).body.data).toEqual({
      replayed: 1,
      nextAfter: null,
    });
    // One copy is left of this minute's four: the call makes it and says there is more.
    expect((await replay({})).body.data).toEqual({ replayed: 1, nextAfter: expect.any(String) });
    const refused = await replay({});
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit: 'replay_failed' },
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another organization's budget is its own.
    const otherEndpoint = await other.client.post(
      `/api/organizations/${other.organizationId}/webhook-endpoints`,
      { url: `${receiverUrl}/other` },
    );
    const otherReplay = await other.client.post(
      `/api/organizations/${other.organizationId}/webhook-endpoints/${otherEndpoint.body.data.id}/replay-failed`,
      {},
    );
    expect(otherReplay.body).toEqual({ data: { replayed: 0, nextAfter: null } });
    accepting = true;
  });

  it('answers unknown ids, bad input and deleted endpoints with coded errors', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    expect((await client.post(`${org}/messages/msg_nope/replay`)).body.error.code).toBe(
      'MESSAGE_NOT_FOUND',
    );
    expect((await client.post(`${org}/dlq/dlq_nope/retry`)).body.error.code).toBe(
      'DLQ_ENTRY_NOT_FOUND',
    );
    const endpoint = await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/x` });
    const endpointId: string = endpoint.body.data.id;
    const bad = await client.post(`${org}/webhook-endpoints/${endpointId}/replay-failed`, {
      since: 'yesterday',
    });
    expect({ status: bad.status, code: bad.body.error.code }).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
    });

    accepting = true;
    await client.post('/v1/events', { eventType: 'x', payload: {} });
    const message = await pollUntil(
      async () =>
        (await client.get(`${org}/messages?endpointId=${endpointId}&status=succeeded`)).body
          .data[0],
      { description: 'a delivered message' },
    );
    await client.delete(`${org}/webhook-endpoints/${endpointId}`);
    const replay = await client.post(`${org}/messages/${message.id}/replay`);
    expect({ status: replay.status, code: replay.body.error.code }).toEqual({
      status: 404,
      code: 'ENDPOINT_NOT_FOUND',
    });
    const failed = await client.post(`${org}/webhook-endpoints/${endpointId}/replay-failed`, {});
    expect(failed.body.error.code).toBe('ENDPOINT_NOT_FOUND');
  });
});
