import { Metadata, ServiceError } from '@grpc/grpc-js';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { newId } from '@hookbase/domain';
import {
  ApiClient,
  connectGrpcIngest,
  createTenant,
  GrpcIngestClient,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
  testEnvironment,
} from '@hookbase/testing';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely */

/**
 * Applications: one organization, its customers as applications. An event for an application
 * reaches only its endpoints; one without reaches only the organization's own; a uid works
 * wherever an application id does.
 */
describe('applications', () => {
  let stack: RunningStack;
  let grpc: GrpcIngestClient;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  const kafka = new Kafka({
    clientId: 'applications-test',
    brokers: testEnvironment().kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack();
    grpc = await connectGrpcIngest(stack.process);
    await producer.connect();
  });

  afterAll(async () => {
    await producer.disconnect();
    grpc?.close();
    await stack?.stop();
    await receiver.stop();
  });

  const deliveredTo = (path: string) =>
    receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body));

  /** An organization with applications A (uid given) and B (none) and an endpoint of each and of none. */
  async function customers(tag: string) {
    const tenant = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${tenant.organizationId}`;
    const a = await tenant.client.post(`${org}/applications`, {
      name: 'Customer A',
      uid: `cust-a-${tag}`,
      metadata: { tier: 'gold' },
    });
    expect(a.status).toBe(201);
    const b = await tenant.client.post(`${org}/applications`, { name: 'Customer B' });
    expect(b.status).toBe(201);
    const endpoint = async (path: string, applicationId?: string) => {
      const created = await tenant.client.post(`${org}/webhook-endpoints`, {
        url: `${receiverUrl}/${tag}/${path}`,
        ...(applicationId ? { applicationId } : {}),
      });
      expect(created.status).toBe(201);
      return created.body.data;
    };
    // A's endpoint is created with the uid, B's with the id.
    const endpointA = await endpoint('a', `cust-a-${tag}`);
    const endpointB = await endpoint('b', b.body.data.id);
    const endpointOrg = await endpoint('org');
    expect(endpointA.applicationId).toBe(a.body.data.id);
    expect(endpointB.applicationId).toBe(b.body.data.id);
    expect(endpointOrg.applicationId).toBeNull();
    return {
      ...tenant,
      org,
      appA: a.body.data,
      appB: b.body.data,
      endpointA,
      endpointB,
      endpointOrg,
      path: (p: string) => `/${tag}/${p}`,
    };
  }

  it('creates, reads by id or uid, lists with cursors and uid prefix, changes and refuses bad input', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const base = `/api/organizations/${organizationId}/applications`;
    const ids: string[] = [];
    for (const uid of ['acme-1', 'acme-2', 'acme-3', 'globex-1']) {
      const created = await client.post(base, { name: uid.toUpperCase(), uid });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ uid, name: uid.toUpperCase(), metadata: {} });
      expect(created.body.data.id).toMatch(/^app_[0-9a-z]{26}$/);
      ids.push(created.body.data.id);
    }
    const noUid = await client.post(base, { name: 'no uid' });
    expect(noUid.body.data.uid).toBeNull();

    expect((await client.get(`${base}/acme-2`)).body.data.id).toBe(ids[1]);
    expect((await client.get(`${base}/${ids[1]}`)).body.data.uid).toBe('acme-2');
    const missing = await client.get(`${base}/nobody`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('APPLICATION_NOT_FOUND');

    const first = await client.get(`${base}?limit=2`);
    expect(first.body.data.map((a: any) => a.id)).toEqual(ids.slice(0, 2));
    const second = await client.get(`${base}?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((a: any) => a.id)).toEqual(ids.slice(2, 4));
    const third = await client.get(`${base}?limit=2&cursor=${second.body.nextCursor}`);
    expect(third.body.data.map((a: any) => a.id)).toEqual([noUid.body.data.id]);
    expect(third.body.nextCursor).toBeNull();
    const acme = await client.get(`${base}?uidPrefix=acme-`);
    expect(acme.body.data.map((a: any) => a.uid)).toEqual(['acme-1', 'acme-2', 'acme-3']);
    // A prefix is taken literally, not as a pattern.
    expect((await client.get(`${base}?uidPrefix=acme_`)).body.data).toEqual([]);

    const duplicate = await client.post(base, { name: 'again', uid: 'acme-1' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe('APPLICATION_UID_TAKEN');
    expect((await client.post(base, { name: 'x', uid: 'app_mine' })).status).toBe(400);
    expect((await client.post(base, { name: 'x', metadata: { v: 'x'.repeat(5000) } })).status).toBe(
      400,
    );
    expect((await client.post(base, { name: 'x', extra: true })).status).toBe(400);

    const changed = await client.patch(`${base}/acme-3`, {
      name: 'Acme Three',
      uid: 'acme-three',
      metadata: { region: 'eu' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({
      id: ids[2],
      name: 'Acme Three',
      uid: 'acme-three',
      metadata: { region: 'eu' },
    });
    expect((await client.patch(`${base}/acme-three`, { uid: 'acme-1' })).status).toBe(409);
    expect((await client.get(`${base}/acme-3`)).status).toBe(404);

    // Another organization's application is not found, by id or by uid.
    const other = await createTenant(stack.url, stack.adminToken);
    const otherBase = `/api/organizations/${other.organizationId}/applications`;
    expect((await other.client.get(`${otherBase}/${ids[0]}`)).status).toBe(404);
    expect((await other.client.get(`${otherBase}/acme-1`)).status).toBe(404);
    expect((await other.client.get(`${base}/acme-1`)).status).toBe(404);
  });

  it("delivers an application's event to its endpoints only, and an event without one to the organization's", async () => {
    const c = await customers('route');
    const publish = (body: object) =>
      c.client.post('/v1/events', { eventType: 'invoice.paid', ...body });
    expect((await publish({ payload: { to: 'a-uid' }, applicationId: c.appA.uid })).status).toBe(
      202,
    );
    expect((await publish({ payload: { to: 'b-id' }, applicationId: c.appB.id })).status).toBe(202);
    expect((await publish({ payload: { to: 'org' } })).status).toBe(202);
    // Naming another application's endpoint does not reach it.
    expect(
      (
        await publish({
          payload: { to: 'a-narrowed' },
          applicationId: c.appA.id,
          endpointIds: [c.endpointB.id, c.endpointOrg.id],
        })
      ).status,
    ).toBe(202);
    await pollUntil(
      () =>
        deliveredTo(c.path('a')).length === 1 &&
        deliveredTo(c.path('b')).length === 1 &&
        deliveredTo(c.path('org')).length === 1,
      { description: 'each event at its one endpoint' },
    );

    const unknown = await publish({ payload: {}, applicationId: 'nobody' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('APPLICATION_NOT_FOUND');
    const otherOrg = await createTenant(stack.url, stack.adminToken);
    const foreign = await otherOrg.client.post('/v1/events', {
      eventType: 'x',
      payload: {},
      applicationId: c.appA.id,
    });
    expect(foreign.status).toBe(404);

    // The batch: each event on its own, an unknown application refused alone.
    const batch = await c.client.post('/v1/events/batch', {
      events: [
        { eventType: 'invoice.paid', payload: { to: 'a-batch' }, applicationId: c.appA.id },
        { eventType: 'invoice.paid', payload: {}, applicationId: 'nobody' },
      ],
    });
    expect(batch.status).toBe(207);
    expect(batch.body.data[1].error.code).toBe('APPLICATION_NOT_FOUND');

    // gRPC, by uid; an unknown one is NOT_FOUND with the code.
    const call = (request: object) =>
      new Promise<{ value?: any; error?: ServiceError }>((resolve) => {
        const metadata = new Metadata();
        metadata.set('authorization', `Bearer ${c.apiKey}`);
        grpc.Publish(
          { event_type: 'invoice.paid', idempotency_key: '', endpoint_ids: [], ...request },
          metadata,
          { deadline: Date.now() + 20_000 },
          (error: ServiceError | null, value: any) => resolve(error ? { error } : { value }),
        );
      });
    expect(
      (await call({ payload_json: '{"to":"b-grpc"}', application_id: c.appB.id })).value,
    ).toBeDefined();
    const grpcUnknown = await call({ payload_json: '{}', application_id: 'nobody' });
    expect(grpcUnknown.error?.metadata.get('hookbase-error-code')[0]).toBe('APPLICATION_NOT_FOUND');

    await pollUntil(
      () => deliveredTo(c.path('a')).length === 2 && deliveredTo(c.path('b')).length === 2,
      { description: 'the batch and gRPC events delivered' },
    );
    expect(deliveredTo(c.path('a'))).toEqual([{ to: 'a-uid' }, { to: 'a-batch' }]);
    expect(deliveredTo(c.path('b'))).toEqual([{ to: 'b-id' }, { to: 'b-grpc' }]);
    expect(deliveredTo(c.path('org'))).toEqual([{ to: 'org' }]);

    // The message log, endpoints and events, filtered by application (uid or id).
    const messagesOfA = await c.client.get(`${c.org}/messages?applicationId=${c.appA.uid}`);
    expect(messagesOfA.body.data.map((m: any) => m.endpointId)).toEqual([
      c.endpointA.id,
      c.endpointA.id,
    ]);
    const messagesOfB = await c.client.get(`${c.org}/messages?applicationId=${c.appB.id}`);
    expect(new Set(messagesOfB.body.data.map((m: any) => m.endpointId))).toEqual(
      new Set([c.endpointB.id]),
    );
    expect((await c.client.get(`${c.org}/messages?applicationId=nobody`)).status).toBe(404);
    const endpointsOfA = await c.client.get(
      `${c.org}/webhook-endpoints?applicationId=${c.appA.uid}`,
    );
    expect(endpointsOfA.body.data.map((e: any) => e.id)).toEqual([c.endpointA.id]);
    expect((await c.client.get(`${c.org}/webhook-endpoints`)).body.data).toHaveLength(3);
    const eventId = messagesOfA.body.data[0].eventId;
    expect((await c.client.get(`${c.org}/events/${eventId}`)).body.data.applicationId).toBe(
      c.appA.id,
    );
    // An endpoint's application cannot be changed.
    expect(
      (
        await c.client.patch(`${c.org}/webhook-endpoints/${c.endpointOrg.id}`, {
          applicationId: c.appA.id,
        })
      ).status,
    ).toBe(400);
  });

  it('keeps idempotency keys per organization: the same key for another application conflicts', async () => {
    const c = await customers('idem');
    const first = await c.client.post('/v1/events', {
      eventType: 't',
      payload: { n: 1 },
      idempotencyKey: 'k-1',
      applicationId: c.appA.uid,
    });
    expect(first.status).toBe(202);
    const again = await c.client.post('/v1/events', {
      eventType: 't',
      payload: { n: 1 },
      idempotencyKey: 'k-1',
      applicationId: c.appA.id,
    });
    expect(again.body.data).toMatchObject({ id: first.body.data.id, duplicate: true });
    const elsewhere = await c.client.post('/v1/events', {
      eventType: 't',
      payload: { n: 1 },
      idempotencyKey: 'k-1',
      applicationId: c.appB.id,
    });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.error.code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('resolves a direct Kafka producer’s application by uid and sets an unknown one aside', async () => {
    const c = await customers('kafka');
    const envelope = (applicationId: string, n: number) => ({
      id: newId('evt'),
      organizationId: c.organizationId,
      eventType: 'direct',
      payload: { n },
      acceptedAt: new Date().toISOString(),
      applicationId,
    });
    await producer.send({
      topic: `${stack.topicPrefix}.events`,
      acks: -1,
      messages: [
        { key: c.organizationId, value: JSON.stringify(envelope('nobody', 0)) },
        { key: c.organizationId, value: JSON.stringify(envelope(c.appA.uid, 1)) },
        { key: c.organizationId, value: JSON.stringify(envelope(c.appB.id, 2)) },
      ],
    });
    await pollUntil(
      () => deliveredTo(c.path('a')).length === 1 && deliveredTo(c.path('b')).length === 1,
      { description: 'the direct events delivered' },
    );
    expect(deliveredTo(c.path('a'))).toEqual([{ n: 1 }]);
    expect(deliveredTo(c.path('b'))).toEqual([{ n: 2 }]);
    const admin = new ApiClient(stack.url, stack.adminToken);
    const listed = await pollUntil(
      async () => {
        const page = await admin.get('/api/invalid-events');
        return page.body.data.find((row: any) => row.reason === 'unknown application');
      },
      { description: 'the unknown application set aside' },
    );
    expect(listed.valueExcerpt).toContain('nobody');
    expect(deliveredTo(c.path('org'))).toEqual([]);
  });

  it('deletes an application with its endpoints, dead-lettering their queued messages', async () => {
    const c = await customers('delete');
    await c.client.patch(`${c.org}/webhook-endpoints/${c.endpointA.id}`, { status: 'paused' });
    await c.client.post('/v1/events', {
      eventType: 'doomed',
      payload: {},
      applicationId: c.appA.id,
    });
    await pollUntil(
      async () =>
        (await c.client.get(`${c.org}/messages?endpointId=${c.endpointA.id}&status=awaiting_retry`))
          .body.data.length === 1,
      { description: 'the message held' },
    );
    const deleted = await c.client.delete(`${c.org}/applications/${c.appA.uid}`);
    expect(deleted.body).toEqual({ data: { id: c.appA.id, deleted: true, endpointsDeleted: 1 } });
    expect((await c.client.get(`${c.org}/applications/${c.appA.id}`)).status).toBe(404);
    expect((await c.client.get(`${c.org}/webhook-endpoints/${c.endpointA.id}`)).status).toBe(404);
    expect((await c.client.get(`${c.org}/webhook-endpoints/${c.endpointB.id}`)).status).toBe(200);
    const entry = await pollUntil(
      async () => (await c.client.get(`${c.org}/dlq?endpointId=${c.endpointA.id}`)).body.data[0],
      { description: 'an endpoint_deleted DLQ entry' },
    );
    expect(entry).toMatchObject({ reason: 'endpoint_deleted', attempts: 0 });
    // The DLQ filters by application too (B's has nothing).
    expect(
      (await c.client.get(`${c.org}/dlq?applicationId=${c.appB.uid ?? c.appB.id}`)).body.data,
    ).toEqual([]);
    // Publishing to it now: not found (once the lookup cache has let it go).
    await pollUntil(
      async () =>
        (
          await c.client.post('/v1/events', {
            eventType: 'x',
            payload: {},
            applicationId: c.appA.id,
          })
        ).status === 404,
      { description: 'the deleted application refused at publish' },
    );
  });
});
