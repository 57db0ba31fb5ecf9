import { Metadata, ServiceError, status } from '@grpc/grpc-js';
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

/* eslint-disable @typescript-eslint/no-explicit-any -- responses are read loosely, asserted by value */

/**
 * The event type catalog against the real stack: CRUD, import from an OpenAPI 3.1 document, and
 * each organization policy enforced at every way in (REST, batch, gRPC, direct Kafka).
 */
describe('event types', () => {
  let stack: RunningStack;
  let grpc: GrpcIngestClient;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  const kafka = new Kafka({
    clientId: 'event-types-test',
    brokers: testEnvironment().kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });

  const orderSchema = {
    type: 'object',
    required: ['id', 'total'],
    properties: {
      id: { type: 'string' },
      total: { type: 'number', minimum: 0 },
      lines: { type: 'array', items: { type: 'object', required: ['sku'] } },
    },
  };

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack({ HOOKBASE_GRPC_PORT: '0' });
    grpc = await connectGrpcIngest(stack.process);
    await producer.connect();
  });

  afterAll(async () => {
    grpc?.close();
    await producer.disconnect();
    await stack?.stop();
    await receiver.stop();
  });

  /** A tenant with one endpoint at `path`, the `order.created` type declared, and `policy` set. */
  async function tenantWith(policy: 'open' | 'declared' | 'validated', path: string) {
    const tenant = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${tenant.organizationId}`;
    const endpoint = await tenant.client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}${path}`,
    });
    expect(endpoint.status).toBe(201);
    const type = await tenant.client.post(`${org}/event-types`, {
      name: 'order.created',
      schema: orderSchema,
      example: { id: 'o1', total: 10 },
    });
    expect(type.status).toBe(201);
    const archived = await tenant.client.post(`${org}/event-types`, {
      name: 'order.legacy',
      archived: true,
    });
    expect(archived.status).toBe(201);
    const set = await tenant.client.patch(`${org}/event-type-policy`, { eventTypePolicy: policy });
    expect(set.status).toBe(200);
    expect(set.body.data.eventTypePolicy).toBe(policy);
    return { ...tenant, org };
  }

  const deliveredTo = (path: string) => receiver.requests.filter((r) => r.path === path);
  const outcome = (response: { status: number; body: any }) => ({
    status: response.status,
    code: response.body.error?.code,
  });

  it('creates, lists, reads, updates and deletes event types, checking the example on save', async () => {
    const { client, organizationId } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/event-types`, {
      name: 'order.created',
      description: 'An order was placed',
      schema: orderSchema,
      example: { id: 'o1', total: 3 },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      name: 'order.created',
      description: 'An order was placed',
      schema: orderSchema,
      example: { id: 'o1', total: 3 },
      deprecated: false,
      archived: false,
      version: 1,
    });
    expect(outcome(await client.post(`${org}/event-types`, { name: 'order.created' }))).toEqual({
      status: 409,
      code: 'EVENT_TYPE_EXISTS',
    });
    const badExample = await client.post(`${org}/event-types`, {
      name: 'order.paid',
      schema: orderSchema,
      example: { id: 'o1', total: 'ten' },
    });
    expect(outcome(badExample)).toEqual({ status: 400, code: 'EXAMPLE_INVALID' });
    expect(badExample.body.error.details.violations).toEqual([
      { pointer: '/total', keyword: 'type', message: 'must be number' },
    ]);
    const badSchema = await client.post(`${org}/event-types`, {
      name: 'order.paid',
      schema: { type: 'objekt' },
    });
    expect(outcome(badSchema)).toEqual({ status: 400, code: 'SCHEMA_INVALID' });
    expect(outcome(await client.post(`${org}/event-types`, { name: 'bad name!' }))).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    expect((await client.post(`${org}/event-types`, { name: 'order.shipped' })).status).toBe(201);
    // What PostgreSQL cannot store is refused as bad input, and a name no type can have is 404.
    const nul = await client.post(`${org}/event-types`, {
      name: 'order.nul',
      description: 'a\u0000b',
      example: { k: '\u0000' },
    });
    expect(outcome(nul)).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
    expect(outcome(await client.get(`${org}/event-types/bad%20name!`))).toEqual({
      status: 404,
      code: 'EVENT_TYPE_NOT_FOUND',
    });

    const listed = await client.get(`${org}/event-types?limit=1`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((t: any) => t.name)).toEqual(['order.created']);
    const next = await client.get(`${org}/event-types?limit=1&cursor=${listed.body.nextCursor}`);
    expect(next.body.data.map((t: any) => t.name)).toEqual(['order.shipped']);
    expect(next.body.nextCursor).toBeNull();

    const updated = await client.patch(`${org}/event-types/order.created`, {
      deprecated: true,
      example: { id: 'o2', total: 4 },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ deprecated: true, version: 2, schema: orderSchema });
    // The stored schema checks a new example; a new schema checks the stored example.
    expect(
      outcome(await client.patch(`${org}/event-types/order.created`, { example: { id: 2 } })),
    ).toEqual({ status: 400, code: 'EXAMPLE_INVALID' });
    expect(
      outcome(
        await client.patch(`${org}/event-types/order.created`, {
          schema: { type: 'object', required: ['customer'] },
        }),
      ),
    ).toEqual({ status: 400, code: 'EXAMPLE_INVALID' });
    expect((await client.get(`${org}/event-types/order.created`)).body.data.version).toBe(2);

    // Another organization sees none of it.
    const other = await createTenant(stack.url, stack.adminToken);
    expect(outcome(await other.client.get(`${org}/event-types/order.created`))).toEqual({
      status: 404,
      code: 'ORGANIZATION_NOT_FOUND',
    });
    const otherOrg = `/api/organizations/${other.organizationId}`;
    expect(outcome(await other.client.get(`${otherOrg}/event-types/order.created`))).toEqual({
      status: 404,
      code: 'EVENT_TYPE_NOT_FOUND',
    });

    expect((await client.delete(`${org}/event-types/order.shipped`)).status).toBe(200);
    expect(outcome(await client.get(`${org}/event-types/order.shipped`))).toEqual({
      status: 404,
      code: 'EVENT_TYPE_NOT_FOUND',
    });
    expect(outcome(await client.delete(`${org}/event-types/order.shipped`))).toEqual({
      status: 404,
      code: 'EVENT_TYPE_NOT_FOUND',
    });
  });

  it('imports the webhooks of an OpenAPI 3.1 document, idempotently, reporting what changed', async () => {
    const { client, organizationId } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const webhook = (schema: unknown, example: unknown) => ({
      post: {
        summary: 'An invoice',
        requestBody: { content: { 'application/json': { schema, example } } },
      },
    });
    const document = {
      openapi: '3.1.0',
      info: { title: 'Billing', version: '1' },
      webhooks: {
        'invoice.paid': webhook({ $ref: '#/components/schemas/Invoice' }, { id: 'i1', amount: 5 }),
        'invoice.voided': webhook({ type: 'object' }, { id: 'i1' }),
      },
      components: {
        schemas: {
          Invoice: {
            type: 'object',
            required: ['id', 'amount'],
            properties: { id: { type: 'string' }, amount: { type: 'integer' } },
          },
        },
      },
    };
    const first = await client.post(`${org}/event-types/import`, document);
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({
      created: ['invoice.paid', 'invoice.voided'],
      updated: [],
      unchanged: [],
    });
    const again = await client.post(`${org}/event-types/import`, document);
    expect(again.body.data).toEqual({
      created: [],
      updated: [],
      unchanged: ['invoice.paid', 'invoice.voided'],
    });
    document.webhooks['invoice.voided'].post.summary = 'A voided invoice';
    const changed = await client.post(`${org}/event-types/import`, document);
    expect(changed.body.data).toEqual({
      created: [],
      updated: ['invoice.voided'],
      unchanged: ['invoice.paid'],
    });
    const paid = await client.get(`${org}/event-types/invoice.paid`);
    expect(paid.body.data).toMatchObject({
      description: 'An invoice',
      example: { id: 'i1', amount: 5 },
      schema: { $ref: '#/$defs/Invoice', $defs: { Invoice: expect.any(Object) } },
    });

    // The imported schema is enforced like any other.
    expect(
      (await client.patch(`${org}/event-type-policy`, { eventTypePolicy: 'validated' })).status,
    ).toBe(200);
    const refused = await client.post('/v1/events', {
      eventType: 'invoice.paid',
      payload: { id: 'i2', amount: 1.5 },
    });
    expect(outcome(refused)).toEqual({ status: 400, code: 'PAYLOAD_INVALID' });
    expect(refused.body.error.details.violations).toEqual([
      expect.objectContaining({ pointer: '/amount', keyword: 'type' }),
    ]);

    // A document that cannot be read, or whose example breaks its schema, changes nothing.
    const unreadable = await client.post(`${org}/event-types/import`, {
      openapi: '3.0.0',
      webhooks: { 'x.y': { post: {} } },
    });
    expect(outcome(unreadable)).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
    expect(unreadable.body.error.details.issues).toEqual([
      expect.objectContaining({ path: '/openapi' }),
    ]);
    const breaking = await client.post(`${org}/event-types/import`, {
      openapi: '3.1.0',
      webhooks: {
        'new.type': webhook({ type: 'object' }, { id: 1 }),
        'bad.example': webhook({ type: 'object', required: ['id'] }, { other: 1 }),
      },
    });
    expect(outcome(breaking)).toEqual({ status: 400, code: 'EXAMPLE_INVALID' });
    expect(breaking.body.error.details.name).toBe('bad.example');
    expect((await client.get(`${org}/event-types/new.type`)).status).toBe(404);
  });

  it('open: any type and payload is accepted, as before', async () => {
    const { client } = await tenantWith('open', '/open');
    const accepted = await Promise.all([
      client.post('/v1/events', { eventType: 'never.declared', payload: {} }),
      client.post('/v1/events', { eventType: 'order.created', payload: { id: 1 } }),
      client.post('/v1/events', { eventType: 'order.legacy', payload: {} }),
    ]);
    expect(accepted.map((r) => r.status)).toEqual([202, 202, 202]);
  });

  it('declared: an unknown or archived type is 400 EVENT_TYPE_UNKNOWN, at REST and in a batch', async () => {
    const { client } = await tenantWith('declared', '/declared');
    expect(
      outcome(await client.post('/v1/events', { eventType: 'never.declared', payload: {} })),
    ).toEqual({ status: 400, code: 'EVENT_TYPE_UNKNOWN' });
    const legacy = await client.post('/v1/events', { eventType: 'order.legacy', payload: {} });
    expect(outcome(legacy)).toEqual({ status: 400, code: 'EVENT_TYPE_UNKNOWN' });
    expect(legacy.body.error.details).toEqual({ eventType: 'order.legacy', archived: true });
    // Declared is enough: the schema is not checked under this policy.
    expect(
      (await client.post('/v1/events', { eventType: 'order.created', payload: { id: 1 } })).status,
    ).toBe(202);
    const batch = await client.post('/v1/events/batch', {
      events: [
        { eventType: 'order.created', payload: {} },
        { eventType: 'never.declared', payload: {} },
      ],
    });
    expect(batch.status).toBe(207);
    expect(batch.body.data.map((r: any) => [r.status, r.error?.code])).toEqual([
      [202, undefined],
      [400, 'EVENT_TYPE_UNKNOWN'],
    ]);
    await pollUntil(() => deliveredTo('/declared').length === 2, {
      description: 'the two accepted events delivered',
    });
  });

  it('validated: a payload that breaks its schema is 400 PAYLOAD_INVALID with each pointer; a valid one is delivered', async () => {
    const { client, org } = await tenantWith('validated', '/validated');
    const refused = await client.post('/v1/events', {
      eventType: 'order.created',
      payload: { id: 'o1', total: -1, lines: [{ sku: 'a' }, { qty: 1 }] },
    });
    expect(outcome(refused)).toEqual({ status: 400, code: 'PAYLOAD_INVALID' });
    // Every violation, each with its pointer and keyword (in the stored schema's key order).
    expect(refused.body.error.details.eventType).toBe('order.created');
    expect(
      [...refused.body.error.details.violations].sort((a: any, b: any) =>
        a.pointer.localeCompare(b.pointer),
      ),
    ).toEqual([
      { pointer: '/lines/1', keyword: 'required', message: "must have required property 'sku'" },
      { pointer: '/total', keyword: 'minimum', message: 'must be >= 0' },
    ]);
    // A refused event reserves no idempotency key: the corrected event may use it.
    const keyed = { eventType: 'order.created', idempotencyKey: 'k-1' };
    expect((await client.post('/v1/events', { ...keyed, payload: { id: 1 } })).status).toBe(400);
    const valid = await client.post('/v1/events', { ...keyed, payload: { id: 'o1', total: 5 } });
    expect(valid.status).toBe(202);
    expect(valid.body.data.duplicate).toBe(false);
    const batch = await client.post('/v1/events/batch', {
      events: [
        { eventType: 'order.created', payload: { id: 'o2', total: 1 } },
        { eventType: 'order.created', payload: { total: 1 } },
        { eventType: 'never.declared', payload: {} },
      ],
    });
    expect(batch.body.data.map((r: any) => [r.status, r.error?.code])).toEqual([
      [202, undefined],
      [400, 'PAYLOAD_INVALID'],
      [400, 'EVENT_TYPE_UNKNOWN'],
    ]);
    expect(batch.body.data[1].error.details.violations).toEqual([
      expect.objectContaining({ pointer: '/', keyword: 'required' }),
    ]);
    await pollUntil(() => deliveredTo('/validated').length === 2, {
      description: 'the two valid events delivered',
    });
    expect(
      deliveredTo('/validated')
        .map((r) => JSON.parse(r.body).id)
        .sort(),
    ).toEqual(['o1', 'o2']);

    // A schema changed is enforced at once by the process that changed it.
    const relaxed = await client.patch(`${org}/event-types/order.created`, {
      schema: { type: 'object' },
    });
    expect(relaxed.status).toBe(200);
    expect(
      (await client.post('/v1/events', { eventType: 'order.created', payload: {} })).status,
    ).toBe(202);
    // Back to open: nothing is checked.
    await client.patch(`${org}/event-type-policy`, { eventTypePolicy: 'open' });
    expect((await client.post('/v1/events', { eventType: 'x', payload: {} })).status).toBe(202);
  });

  type Outcome = { value?: any; error?: ServiceError };
  const call = (method: 'Publish' | 'PublishBatch', request: unknown, key: string) =>
    new Promise<Outcome>((resolve) => {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${key}`);
      grpc[method](
        request,
        metadata,
        { deadline: Date.now() + 20_000 },
        (error: ServiceError | null, value: any) => resolve(error ? { error } : { value }),
      );
    });

  it('gRPC: refusals carry their status, code and details; valid events are accepted', async () => {
    const { apiKey } = await tenantWith('validated', '/grpc');
    const invalid = await call(
      'Publish',
      { event_type: 'order.created', payload_json: '{"id":"o1","total":"x"}' },
      apiKey,
    );
    expect(invalid.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(invalid.error?.metadata.get('hookbase-error-code')[0]).toBe('PAYLOAD_INVALID');
    expect(JSON.parse(String(invalid.error?.metadata.get('hookbase-error-details')[0]))).toEqual({
      eventType: 'order.created',
      violations: [{ pointer: '/total', keyword: 'type', message: 'must be number' }],
    });
    const unknown = await call('Publish', { event_type: 'nope', payload_json: '{}' }, apiKey);
    expect(unknown.error?.metadata.get('hookbase-error-code')[0]).toBe('EVENT_TYPE_UNKNOWN');
    const valid = await call(
      'Publish',
      { event_type: 'order.created', payload_json: '{"id":"o1","total":1}' },
      apiKey,
    );
    expect(valid.error).toBeUndefined();
    const batch = await call(
      'PublishBatch',
      {
        events: [
          { event_type: 'order.created', payload_json: '{"id":"o2","total":2}' },
          { event_type: 'order.created', payload_json: '{"id":"o3"}' },
        ],
      },
      apiKey,
    );
    expect(batch.error).toBeUndefined();
    const results = batch.value.results as any[];
    expect(results.map((r) => r.result)).toEqual(['event', 'error']);
    expect(results[1].error.code).toBe('PAYLOAD_INVALID');
    expect(JSON.parse(results[1].error.details_json).violations).toEqual([
      expect.objectContaining({ pointer: '/', keyword: 'required' }),
    ]);
    await pollUntil(() => deliveredTo('/grpc').length === 2, {
      description: 'the two valid gRPC events delivered',
    });
  });

  it('direct Kafka: refused records go to the invalid-events topic with the reason; valid ones flow', async () => {
    const { organizationId } = await tenantWith('validated', '/kafka');
    const envelope = (eventType: string, payload: object) => ({
      key: organizationId,
      value: JSON.stringify({
        id: newId('evt'),
        organizationId,
        eventType,
        payload,
        acceptedAt: new Date().toISOString(),
      }),
    });
    await producer.send({
      topic: `${stack.topicPrefix}.events`,
      acks: -1,
      messages: [
        envelope('order.created', { id: 'k1', total: 'no' }),
        envelope('never.declared', {}),
        envelope('order.created', { id: 'k2', total: 2 }),
      ],
    });
    await pollUntil(() => deliveredTo('/kafka').length === 1, {
      description: 'the valid envelope delivered',
    });
    expect(JSON.parse(deliveredTo('/kafka')[0].body)).toEqual({ id: 'k2', total: 2 });
    const admin = new ApiClient(stack.url, stack.adminToken);
    const reasons = await pollUntil(
      async () => {
        const page = await admin.get('/api/invalid-events?limit=250');
        const mine = page.body.data
          .filter((row: any) => row.key === organizationId)
          .map((row: any) => row.reason as string);
        return mine.length === 2 ? mine : undefined;
      },
      { description: 'the two refused records listed' },
    );
    expect(reasons.sort()).toEqual([
      expect.stringMatching(/^EVENT_TYPE_UNKNOWN: /),
      expect.stringMatching(/^PAYLOAD_INVALID: .*\/total must be number/),
    ]);
    // And on the invalid-events topic, with the reason in a header.
    const consumer = kafka.consumer({ groupId: `read-${newId('evt')}` });
    const headers: string[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({
        topic: `${stack.topicPrefix}.events.invalid`,
        fromBeginning: true,
      });
      await new Promise<void>((resolve, reject) => {
        setTimeout(
          () => reject(new Error('invalid-events records not read in 30 s')),
          30_000,
        ).unref();
        consumer
          .run({
            eachMessage: async ({ message }) => {
              if (message.key?.toString() !== organizationId) return;
              headers.push(String(message.headers?.['hookbase-reason']));
              if (headers.length === 2) resolve();
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    expect(headers.sort()).toEqual(reasons.sort());
  });
});
