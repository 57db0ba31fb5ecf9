import { Client } from 'pg';
import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/** Retention per plan: finished work is pruned after the plan's period, unfinished work is kept. */
describe('retention', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack({
      HOOKBASE_RETENTION_DAYS_FREE: '0.00002', // about 1.7 s
      HOOKBASE_RETENTION_DAYS_PRO: '30',
      HOOKBASE_RETENTION_INTERVAL_MS: '500',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  it('prunes a free organization’s finished messages and events, keeps waiting ones and pro’s', async () => {
    const free = await createTenant(stack.url, stack.adminToken, 'free');
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    const freeOrg = `/api/organizations/${free.organizationId}`;
    const proOrg = `/api/organizations/${pro.organizationId}`;
    const active = (
      await free.client.post(`${freeOrg}/webhook-endpoints`, { url: `${receiverUrl}/f` })
    ).body.data.id;
    const paused = (
      await free.client.post(`${freeOrg}/webhook-endpoints`, {
        url: `${receiverUrl}/p`,
        status: 'paused',
      })
    ).body.data.id;
    await pro.client.post(`${proOrg}/webhook-endpoints`, { url: `${receiverUrl}/pro` });

    const done = await free.client.post('/v1/events', {
      eventType: 'done',
      payload: { n: 1 },
      idempotencyKey: 'once',
      endpointIds: [active],
    });
    const waiting = await free.client.post('/v1/events', {
      eventType: 'waiting',
      payload: {},
      idempotencyKey: 'kept-with-its-event',
      endpointIds: [paused],
    });
    const kept = await pro.client.post('/v1/events', { eventType: 'kept', payload: {} });
    const message = await pollUntil(
      async () =>
        (await free.client.get(`${freeOrg}/messages?endpointId=${active}&status=succeeded`)).body
          .data[0],
      { description: 'the free event delivered' },
    );

    await pollUntil(
      async () => (await free.client.get(`${freeOrg}/events/${done.body.data.id}`)).status === 404,
      { timeoutMs: 20_000, description: 'the finished event pruned' },
    );
    expect((await free.client.get(`${freeOrg}/messages/${message.id}`)).status).toBe(404);
    // Not finished: kept, with its event.
    const held = await free.client.get(`${freeOrg}/events/${waiting.body.data.id}`);
    expect(held.status).toBe(200);
    expect(held.body.data.messages[0].status).toBe('awaiting_retry');
    // Another plan's period has not passed.
    await pollUntil(
      async () => (await pro.client.get(`${proOrg}/events/${kept.body.data.id}`)).status === 200,
      {
        description: 'the pro event recorded',
      },
    );
    // The idempotency key went with its event: the same key now publishes a new event.
    const again = await free.client.post('/v1/events', {
      eventType: 'done',
      payload: { n: 1 },
      idempotencyKey: 'once',
      endpointIds: [active],
    });
    expect(again.body.data.duplicate).toBe(false);
    expect(again.body.data.id).not.toBe(done.body.data.id);
    // The waiting event's key stays reserved while its event is kept, past the same period.
    const repeat = await free.client.post('/v1/events', {
      eventType: 'waiting',
      payload: {},
      idempotencyKey: 'kept-with-its-event',
      endpointIds: [paused],
    });
    expect(repeat.body.data).toMatchObject({ id: waiting.body.data.id, duplicate: true });
  });

  it("prunes an endpoint's past routings after its organization's period", async () => {
    const free = await createTenant(stack.url, stack.adminToken, 'free');
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    const database = new Client({ connectionString: stack.databaseUrl });
    await database.connect();
    try {
      const pastRoutings = async (organizationId: string) =>
        (
          await database.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM endpoint_routing_history WHERE organization_id = $1',
            [organizationId],
          )
        ).rows[0].n;
      for (const { client, organizationId } of [free, pro]) {
        const org = `/api/organizations/${organizationId}`;
        const created = await client.post(`${org}/webhook-endpoints`, {
          url: `${receiverUrl}/routed`,
          eventTypes: ['a'],
        });
        const edit = await client.patch(`${org}/webhook-endpoints/${created.body.data.id}`, {
          eventTypes: ['b'],
        });
        expect(edit.status).toBe(200);
        expect(await pastRoutings(organizationId)).toBe(1);
      }
      await pollUntil(async () => (await pastRoutings(free.organizationId)) === 0, {
        timeoutMs: 20_000,
        description: "the free organization's past routing pruned",
      });
      expect(await pastRoutings(pro.organizationId)).toBe(1);
    } finally {
      await database.end();
    }
  });

  it("prunes an application's log by its own shorter retention, before the plan's", async () => {
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${pro.organizationId}`;
    const tooLong = await pro.client.post(`${org}/applications`, { name: 'x', retentionDays: 31 });
    expect(tooLong.status).toBe(400);
    const brief = await pro.client.post(`${org}/applications`, {
      name: 'Brief',
      uid: 'brief',
      retentionDays: 0.00002, // about 1.7 s, against the plan's 30 days
    });
    expect(brief.status).toBe(201);
    expect(brief.body.data.retentionDays).toBe(0.00002);
    await pro.client.post(`${org}/applications`, { name: 'Plan long', uid: 'long' });
    expect((await pro.client.patch(`${org}/applications/long`, { retentionDays: 31 })).status).toBe(
      400,
    );
    for (const applicationId of ['brief', 'long']) {
      const created = await pro.client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/${applicationId}`,
        applicationId,
      });
      expect(created.status).toBe(201);
    }
    const short = await pro.client.post('/v1/events', {
      eventType: 'short',
      payload: {},
      applicationId: 'brief',
    });
    const long = await pro.client.post('/v1/events', {
      eventType: 'long',
      payload: {},
      applicationId: 'long',
    });
    await pollUntil(
      async () =>
        (await pro.client.get(`${org}/messages?applicationId=long&status=succeeded`)).body.data
          .length === 1,
      { description: "the long-kept application's message delivered" },
    );
    await pollUntil(
      async () => (await pro.client.get(`${org}/events/${short.body.data.id}`)).status === 404,
      { timeoutMs: 20_000, description: "the brief application's event pruned" },
    );
    expect((await pro.client.get(`${org}/messages?applicationId=brief`)).body.data).toEqual([]);
    expect((await pro.client.get(`${org}/events/${long.body.data.id}`)).status).toBe(200);
    expect((await pro.client.get(`${org}/messages?applicationId=long`)).body.data).toHaveLength(1);
  });
});
