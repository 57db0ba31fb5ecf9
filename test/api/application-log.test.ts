import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely */

/**
 * What an operator reads and recovers per application: the events list (by application, type and
 * acceptance time, paged, no payloads), replay-failed across an application's endpoints, and an
 * application's statistics (its endpoints' together).
 */
describe('events, replay-failed and statistics per application', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let accepting = false;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    // Paths ending in /gone refuse for good until `accepting`: their messages fail at once.
    receiver.respondWith((request) =>
      request.path.endsWith('/gone') && !accepting
        ? { status: 410, body: 'gone' }
        : { status: 200, body: 'ok' },
    );
    stack = await startStack({
      HOOKBASE_RETRY_POLL_MS: '100',
      // Two per call: the continuation across an application's endpoints shows with four.
      HOOKBASE_REPLAY_FAILED_MAX_PER_CALL: '2',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('lists, replays and counts one application at a time', async () => {
    const tenant = await createTenant(stack.url, stack.adminToken);
    const { client } = tenant;
    const org = `/api/organizations/${tenant.organizationId}`;
    const appA = (await client.post(`${org}/applications`, { name: 'A', uid: 'cust-a' })).body.data;
    const appB = (await client.post(`${org}/applications`, { name: 'B' })).body.data;
    const empty = (await client.post(`${org}/applications`, { name: 'None yet' })).body.data;
    const endpoint = async (path: string, applicationId?: string) =>
      (
        await client.post(`${org}/webhook-endpoints`, {
          url: `${receiverUrl}/${tenant.organizationId}/${path}`,
          ...(applicationId ? { applicationId } : {}),
        })
      ).body.data.id as string;
    const a1 = await endpoint('a1/gone', 'cust-a');
    const a2 = await endpoint('a2/gone', appA.id);
    const b = await endpoint('b/gone', appB.id);
    await endpoint('org');

    const before = new Date(Date.now() - 1000).toISOString();
    const publish = async (eventType: string, applicationId?: string) => {
      const response = await client.post('/v1/events', {
        eventType,
        payload: { big: 'x'.repeat(1000) },
        ...(applicationId ? { applicationId } : {}),
      });
      expect(response.status).toBe(202);
      return response.body.data.id as string;
    };
    const evA1 = await publish('order.created', 'cust-a');
    const evA2 = await publish('order.paid', appA.id);
    const evB = await publish('order.created', appB.id);
    const evOrg = await publish('order.created');

    // Events appear once the fan-out recorded them; A's four messages and B's one fail at once.
    const all = await pollUntil(
      async () => {
        const page = (await client.get(`${org}/events`)).body;
        return page.data.length === 4 ? page : undefined;
      },
      { description: 'the four events recorded' },
    );
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?applicationId=cust-a&status=failed`)).body.data
          .length === 4 &&
        (await client.get(`${org}/messages?applicationId=${appB.id}&status=failed`)).body.data
          .length === 1,
      { description: "A's four messages and B's one failed" },
    );

    // The list: newest first, no payloads, every event of the organization without a filter.
    const ids = all.data.map((event: any) => event.id);
    expect(new Set(ids)).toEqual(new Set([evA1, evA2, evB, evOrg]));
    expect(ids).toEqual([...ids].sort().reverse());
    expect(all.nextCursor).toBeNull();
    for (const event of all.data) {
      expect(Object.keys(event).sort()).toEqual(
        [
          'acceptedAt',
          'applicationId',
          'channels',
          'eventType',
          'id',
          'idempotencyKey',
          'payloadPurgedAt',
        ].sort(),
      );
    }
    expect(all.data.find((event: any) => event.id === evA1)).toMatchObject({
      eventType: 'order.created',
      applicationId: appA.id,
    });
    // One event still shows its payload.
    expect((await client.get(`${org}/events/${evA1}`)).body.data.payload).toEqual({
      big: 'x'.repeat(1000),
    });

    const listed = async (query: string) => {
      const response = await client.get(`${org}/events?${query}`);
      expect(response.status).toBe(200);
      return response.body.data.map((event: any) => event.id).sort();
    };
    // By application, id or uid; by type; both.
    expect(await listed('applicationId=cust-a')).toEqual([evA1, evA2].sort());
    expect(await listed(`applicationId=${appA.id}`)).toEqual([evA1, evA2].sort());
    expect(await listed(`applicationId=${appB.id}`)).toEqual([evB]);
    expect(await listed(`applicationId=${empty.id}`)).toEqual([]);
    expect(await listed('eventType=order.created')).toEqual([evA1, evB, evOrg].sort());
    expect(await listed('eventType=order.created&applicationId=cust-a')).toEqual([evA1]);
    // By acceptance time.
    const after = new Date(Date.now() + 60_000).toISOString();
    expect(await listed(`createdAfter=${encodeURIComponent(before)}`)).toHaveLength(4);
    expect(await listed(`createdAfter=${encodeURIComponent(after)}`)).toEqual([]);
    expect(await listed(`createdBefore=${encodeURIComponent(before)}`)).toEqual([]);
    const acceptedA2 = all.data.find((event: any) => event.id === evA2).acceptedAt;
    expect(
      await listed(`applicationId=cust-a&createdBefore=${encodeURIComponent(acceptedA2)}`),
    ).not.toContain(evA2);
    expect(
      await listed(`applicationId=cust-a&createdAfter=${encodeURIComponent(acceptedA2)}`),
    ).toContain(evA2);
    // Pages, by cursor.
    const first = (await client.get(`${org}/events?applicationId=cust-a&limit=1`)).body;
    expect(first.data).toHaveLength(1);
    expect(first.nextCursor).toBe(first.data[0].id);
    const second = (
      await client.get(`${org}/events?applicationId=cust-a&limit=1&cursor=${first.nextCursor}`)
    ).body;
    expect(second.data).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    expect([first.data[0].id, second.data[0].id]).toEqual([evA1, evA2].sort().reverse());
    // Bad filters: clear 4xx with a code.
    const unknown = await client.get(`${org}/events?applicationId=nobody`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('APPLICATION_NOT_FOUND');
    const backwards = await client.get(
      `${org}/events?createdAfter=${encodeURIComponent(after)}&createdBefore=${encodeURIComponent(before)}`,
    );
    expect(backwards.status).toBe(400);
    expect(backwards.body.error.code).toBe('VALIDATION_FAILED');

    // Statistics before any recovery: A's two endpoints together, B's one.
    const statsOf = async (appId: string) => {
      const response = await client.get(`${org}/applications/${appId}/stats`);
      expect(response.status).toBe(200);
      return response.body.data;
    };
    expect(await statsOf('cust-a')).toMatchObject({
      endpoints: 2,
      succeeded: 0,
      failed: 4,
      successRate: 0,
    });
    expect(await statsOf(appB.id)).toMatchObject({ endpoints: 1, succeeded: 0, failed: 1 });
    expect(await statsOf(empty.id)).toMatchObject({
      endpoints: 0,
      succeeded: 0,
      failed: 0,
      successRate: null,
      lastAttemptAt: null,
      recentAttempts: [],
    });
    expect((await client.get(`${org}/applications/nobody/stats`)).status).toBe(404);

    // Replay-failed across A's endpoints: two per call, going on with `nextAfter`; B untouched.
    accepting = true;
    const replayed = await client.post(`${org}/applications/cust-a/replay-failed`, {});
    expect(replayed.status).toBe(202);
    expect(replayed.body).toEqual({ data: { replayed: 2, nextAfter: expect.any(String) } });
    const rest = await client.post(`${org}/applications/${appA.id}/replay-failed`, {
      after: replayed.body.data.nextAfter,
    });
    expect(rest.body).toEqual({ data: { replayed: 2, nextAfter: null } });
    await pollUntil(
      async () =>
        (await client.get(`${org}/messages?applicationId=cust-a&status=succeeded`)).body.data
          .length === 4,
      { description: "the copies of A's four failures delivered" },
    );
    const ofA = (await client.get(`${org}/messages?applicationId=cust-a`)).body.data;
    expect(ofA.filter((m: any) => m.replayOf !== null)).toHaveLength(4);
    expect(new Set(ofA.map((m: any) => m.endpointId))).toEqual(new Set([a1, a2]));
    const ofB = (await client.get(`${org}/messages?applicationId=${appB.id}`)).body.data;
    expect(ofB).toEqual([expect.objectContaining({ endpointId: b, status: 'failed' })]);
    expect((await client.post(`${org}/applications/nobody/replay-failed`, {})).status).toBe(404);
    expect(
      (await client.post(`${org}/applications/${empty.id}/replay-failed`, {})).body.data,
    ).toEqual({ replayed: 0, nextAfter: null });

    // Statistics after: A's successes are its two endpoints' added up.
    const statsA = await statsOf('cust-a');
    expect(statsA).toMatchObject({ endpoints: 2, succeeded: 4, failed: 4, successRate: 0.5 });
    expect(statsA.recentAttempts).toHaveLength(8);
    const one = (await client.get(`${org}/webhook-endpoints/${a1}/stats`)).body.data;
    const two = (await client.get(`${org}/webhook-endpoints/${a2}/stats`)).body.data;
    expect(one.succeeded + two.succeeded).toBe(statsA.succeeded);
    expect(one.failed + two.failed).toBe(statsA.failed);
    expect(await statsOf(appB.id)).toMatchObject({ endpoints: 1, succeeded: 0, failed: 1 });
  });
});
