/* eslint-disable @typescript-eslint/no-explicit-any -- API bodies are read loosely, asserted by value */
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/**
 * Polling endpoints (ADR 0011): a consumer pulls an endpoint's messages in acceptance order from a
 * cursor; resuming from any cursor it was given yields exactly what follows, never a gap nor a
 * reordering, while events are being published and replayed at the same time.
 */
describe('polling endpoints', () => {
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

  async function pollingEndpoint(client: ApiClient, org: string, eventTypes: string[]) {
    const created = await client.post(`${org}/webhook-endpoints`, { kind: 'polling', eventTypes });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ kind: 'polling', url: null, fifoEnabled: false });
    return created.body.data.id as string;
  }

  it('hands a restarting consumer every message once per place, in acceptance order, with no gaps', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const endpointId = await pollingEndpoint(client, org, ['seq']);
    const pollPath = `${org}/webhook-endpoints/${endpointId}/poll`;

    // The consumer: pages of random size; now and then it "restarts" from a cursor it saved
    // earlier (not always the latest), and must then get exactly what it got the first time.
    const bySequence = new Map<number, any>();
    const savedCursors: { cursor: string | undefined; sequence: number }[] = [
      { cursor: undefined, sequence: 0 },
    ];
    const violations: string[] = [];
    let position = savedCursors[0];
    let polls = 0;
    let restarts = 0;
    let expected = Number.POSITIVE_INFINITY;
    const consumer = pollUntil(
      async () => {
        const limit = 1 + Math.floor(Math.random() * 60);
        const query = `limit=${limit}${position.cursor ? `&cursor=${position.cursor}` : ''}`;
        const page = await client.get(`${pollPath}?${query}`);
        polls++;
        if (page.status !== 200) {
          violations.push(`poll answered ${page.status} ${JSON.stringify(page.body)}`);
          return true;
        }
        const data: any[] = page.body.data;
        if (data.length > limit) violations.push(`page of ${data.length} for limit ${limit}`);
        let previous = position.sequence;
        for (const message of data) {
          const sequence = Number(message.sequence);
          // Places follow one another with no hole (nothing else writes this log).
          if (sequence !== previous + 1) {
            violations.push(`after ${previous} came ${sequence}`);
          }
          previous = sequence;
          const known = bySequence.get(sequence);
          if (known && known.messageId !== message.messageId) {
            violations.push(`place ${sequence} was ${known.messageId}, now ${message.messageId}`);
          }
          bySequence.set(sequence, message);
        }
        const nextCursor: string = page.body.nextCursor;
        if (data.length > 0 && nextCursor !== data[data.length - 1].cursor) {
          violations.push('nextCursor is not the last message’s cursor');
        }
        if (data.length === 0 && position.cursor && nextCursor !== position.cursor) {
          violations.push('an empty page moved the cursor');
        }
        position = { cursor: nextCursor, sequence: previous };
        savedCursors.push(position);
        if (Math.random() < 0.2) {
          position = savedCursors[Math.floor(Math.random() * savedCursors.length)];
          restarts++;
        }
        return bySequence.size >= expected && position.sequence >= expected;
      },
      { timeoutMs: 120_000, intervalMs: 20, description: 'the consumer to have every message' },
    );

    // Acceptance order: 120 events published one after another, then three bursts of 60 in
    // parallel (ordered only burst after burst), with replays of seen messages during the bursts.
    const sequential: string[] = [];
    for (let n = 0; n < 120; n++) {
      const response = await client.post('/v1/events', { eventType: 'seq', payload: { n } });
      expect(response.status).toBe(202);
      sequential.push(response.body.data.id);
    }
    const bursts: string[][] = [];
    const replays: Promise<any>[] = [];
    for (let burst = 0; burst < 3; burst++) {
      const seen = [...bySequence.values()];
      for (const message of seen.slice(0, 4)) {
        replays.push(client.post(`${org}/messages/${message.messageId}/replay`));
      }
      const responses = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          client.post('/v1/events', { eventType: 'seq', payload: { burst, i } }),
        ),
      );
      for (const response of responses) expect(response.status).toBe(202);
      bursts.push(responses.map((response) => response.body.data.id));
    }
    const replayed = await Promise.all(replays);
    for (const response of replayed) expect(response.status).toBe(202);
    expected = 120 + 180 + replayed.length;
    await consumer;

    expect(violations).toEqual([]);
    expect(restarts).toBeGreaterThan(0);
    expect(polls).toBeGreaterThan(restarts);
    const log = [...bySequence.keys()].sort((a, b) => a - b).map((s) => bySequence.get(s));
    expect(log.map((m) => Number(m.sequence))).toEqual(log.map((_, i) => i + 1));
    const originals = log.filter((m) => m.replayOf === null);
    const copies = log.filter((m) => m.replayOf !== null);
    // Published one after another: exactly that order, first.
    expect(originals.slice(0, 120).map((m) => m.eventId)).toEqual(sequential);
    expect(originals.slice(0, 120).map((m) => m.payload.n)).toEqual(sequential.map((_, n) => n));
    // Each burst as a whole after the one before it, nothing lost, nothing twice.
    for (let burst = 0; burst < 3; burst++) {
      const block = originals.slice(120 + burst * 60, 120 + (burst + 1) * 60);
      expect(block.map((m) => m.eventId).sort()).toEqual([...bursts[burst]].sort());
    }
    expect(originals).toHaveLength(300);
    expect(new Set(originals.map((m) => m.messageId)).size).toBe(300);
    // Replays: copies at the end of the log (after their original), with the original's webhookId.
    expect(copies.map((m) => m.messageId).sort()).toEqual(
      replayed.map((r) => r.body.data.id).sort(),
    );
    const placeOf = new Map(log.map((m) => [m.messageId, Number(m.sequence)]));
    for (const copy of copies) {
      expect(copy.webhookId).toBe(copy.replayOf);
      expect(placeOf.get(copy.messageId)!).toBeGreaterThan(placeOf.get(copy.replayOf)!);
    }
    for (const message of originals) expect(message.webhookId).toBe(message.messageId);
    expect(log[0]).toEqual({
      messageId: expect.stringMatching(/^msg_/),
      webhookId: log[0].messageId,
      replayOf: null,
      eventId: sequential[0],
      eventType: 'seq',
      payload: { n: 0 },
      acceptedAt: expect.any(String),
      createdAt: expect.any(String),
      sequence: '1',
      cursor: expect.any(String),
    });
  });

  it('shows polled messages as pending until polled past, then succeeded; replays append; paused holds; delete dead-letters', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'free');
    const org = `/api/organizations/${organizationId}`;
    const endpointId = await pollingEndpoint(client, org, ['log']);
    const pollPath = `${org}/webhook-endpoints/${endpointId}/poll`;
    for (let n = 0; n < 3; n++) {
      expect((await client.post('/v1/events', { eventType: 'log', payload: { n } })).status).toBe(
        202,
      );
    }
    // The log's own order is by id (time, then random): statuses are read by message id.
    const statusById = async (): Promise<Map<string, string>> =>
      new Map(
        (await client.get(`${org}/messages?endpointId=${endpointId}`)).body.data.map((m: any) => [
          m.id,
          m.status,
        ]),
      );
    const statuses = async (ids: string[]) => {
      const byId = await statusById();
      return ids.map((id) => byId.get(id));
    };
    await pollUntil(async () => (await statusById()).size === 3, {
      description: 'three messages in the log',
    });
    expect([...(await statusById()).values()]).toEqual(['pending', 'pending', 'pending']);

    const first = await client.get(`${pollPath}?limit=2`);
    expect(first.body.data.map((m: any) => m.payload.n)).toEqual([0, 1]);
    // Fetched but not yet polled past: still pending.
    expect([...(await statusById()).values()]).toEqual(['pending', 'pending', 'pending']);
    const second = await client.get(`${pollPath}?cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((m: any) => m.payload.n)).toEqual([2]);
    const ids = [...first.body.data, ...second.body.data].map((m: any) => m.messageId);
    expect(await statuses(ids)).toEqual(['succeeded', 'succeeded', 'pending']);
    const empty = await client.get(`${pollPath}?cursor=${second.body.nextCursor}`);
    expect(empty.body).toEqual({ data: [], nextCursor: second.body.nextCursor });
    expect(await statuses(ids)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const one = (await client.get(`${org}/messages/${first.body.data[0].messageId}`)).body.data;
    expect(one).toMatchObject({ status: 'succeeded', attempts: 0, finishedAt: expect.any(String) });
    expect(receiver.requests).toHaveLength(0);

    // A replay appends a copy at the end of the log, with the original's webhookId.
    const copy = await client.post(`${org}/messages/${first.body.data[0].messageId}/replay`);
    expect(copy.status).toBe(202);
    expect(copy.body.data).toMatchObject({
      status: 'pending',
      replayOf: first.body.data[0].messageId,
    });
    const afterReplay = await client.get(`${pollPath}?cursor=${second.body.nextCursor}`);
    expect(afterReplay.body.data).toEqual([
      expect.objectContaining({
        messageId: copy.body.data.id,
        webhookId: first.body.data[0].messageId,
        sequence: '4',
        payload: { n: 0 },
      }),
    ]);

    // Paused holds: an empty page, the cursor unchanged; resumed, the message is there.
    expect(
      (await client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'paused' })).status,
    ).toBe(200);
    expect((await client.post('/v1/events', { eventType: 'log', payload: { n: 3 } })).status).toBe(
      202,
    );
    await pollUntil(async () => (await statusById()).size === 5, {
      description: 'the fifth message',
    });
    const cursor = afterReplay.body.nextCursor;
    expect((await client.get(`${pollPath}?cursor=${cursor}`)).body).toEqual({
      data: [],
      nextCursor: cursor,
    });
    await client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'active' });
    const resumed = await client.get(`${pollPath}?cursor=${cursor}`);
    expect(resumed.body.data.map((m: any) => m.payload.n)).toEqual([3]);
    // Polling from after the copy acknowledged it; the fifth message was fetched, not polled past.
    const unfetched = [resumed.body.data[0].messageId];

    // Deleting the endpoint dead-letters what was never polled past.
    expect((await client.delete(`${org}/webhook-endpoints/${endpointId}`)).status).toBe(200);
    const dlq = (await client.get(`${org}/dlq?endpointId=${endpointId}`)).body.data;
    expect(dlq).toEqual([
      expect.objectContaining({ reason: 'endpoint_deleted', messageId: unfetched[0] }),
    ]);
    expect(await statuses(unfetched)).toEqual(['cancelled']);
    expect(await statuses([...ids, copy.body.data.id])).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    expect((await client.get(pollPath)).status).toBe(404);
  });

  it('refuses FIFO, a url or config, and answers bad polls with coded errors', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const other = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;

    const fifo = await client.post(`${org}/webhook-endpoints`, {
      kind: 'polling',
      fifoEnabled: true,
    });
    expect(fifo.status).toBe(400);
    expect(fifo.body.error.code).toBe('FIFO_NOT_SUPPORTED');
    const withUrl = await client.post(`${org}/webhook-endpoints`, {
      kind: 'polling',
      url: `${receiverUrl}/x`,
    });
    expect(withUrl.status).toBe(400);
    expect(withUrl.body.error.code).toBe('VALIDATION_FAILED');

    const endpointId = await pollingEndpoint(client, org, []);
    const patched = await client.patch(`${org}/webhook-endpoints/${endpointId}`, {
      fifoEnabled: true,
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error.code).toBe('FIFO_NOT_SUPPORTED');
    const patchedConfig = await client.patch(`${org}/webhook-endpoints/${endpointId}`, {
      config: { a: 1 },
    });
    expect(patchedConfig.status).toBe(400);
    expect(patchedConfig.body.error.code).toBe('VALIDATION_FAILED');
    expect((await client.get(`${org}/webhook-endpoints/${endpointId}`)).body.data).toMatchObject({
      fifoEnabled: false,
      config: {},
    });

    const pollPath = `${org}/webhook-endpoints/${endpointId}/poll`;
    const start = await client.get(pollPath);
    expect(start.status).toBe(200);
    expect(start.body).toEqual({ data: [], nextCursor: expect.any(String) });

    const otherEndpoint = await pollingEndpoint(client, org, []);
    const foreignCursor = (await client.get(`${org}/webhook-endpoints/${otherEndpoint}/poll`)).body
      .nextCursor;
    for (const query of [
      'cursor=not-a-cursor',
      'cursor=%2B%2F%3D',
      `cursor=${start.body.nextCursor}x`,
      `cursor=${foreignCursor}`,
      `cursor=${Buffer.from(`p1.${endpointId}.-1`).toString('base64url')}`,
      'limit=0',
      'limit=501',
      'limit=ten',
      'limit=2.5',
    ]) {
      const bad = await client.get(`${pollPath}?${query}`);
      expect({ query, status: bad.status, code: bad.body.error?.code }).toEqual({
        query,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    expect((await client.get(`${pollPath}?limit=500`)).status).toBe(200);

    const http = await client.post(`${org}/webhook-endpoints`, { url: `${receiverUrl}/h` });
    const wrongKind = await client.get(`${org}/webhook-endpoints/${http.body.data.id}/poll`);
    expect(wrongKind.status).toBe(409);
    expect(wrongKind.body.error.code).toBe('ENDPOINT_NOT_POLLING');

    const unknown = await client.get(`${org}/webhook-endpoints/ep_01jz0000000000000000000000/poll`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('ENDPOINT_NOT_FOUND');

    // Another organization's endpoint: not found, through either organization's path.
    const theirs = await pollingEndpoint(
      other.client,
      `/api/organizations/${other.organizationId}`,
      [],
    );
    const foreign = await client.get(`${org}/webhook-endpoints/${theirs}/poll`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('ENDPOINT_NOT_FOUND');
  });

  it('refuses a made-up or altered cursor, so no consumer skips messages it never read', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${organizationId}`;
    const endpointId = await pollingEndpoint(client, org, ['skip']);
    const pollPath = `${org}/webhook-endpoints/${endpointId}/poll`;
    for (let n = 0; n < 3; n++) {
      expect((await client.post('/v1/events', { eventType: 'skip', payload: { n } })).status).toBe(
        202,
      );
    }
    const statuses = async () =>
      (await client.get(`${org}/messages?endpointId=${endpointId}`)).body.data.map(
        (m: any) => m.status,
      );
    await pollUntil(async () => (await statuses()).length === 3, {
      description: 'three messages in the log',
    });

    const first = await client.get(`${pollPath}?limit=1`);
    expect(first.body.data.map((m: any) => m.payload.n)).toEqual([0]);
    const cursor: string = first.body.nextCursor;
    // The real cursor with its place moved forward (whatever else it carries kept), and a cursor
    // made up in the form an unsigned one had: both would acknowledge messages never read.
    const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('.');
    const moved = Buffer.from([parts[0], parts[1], '3', ...parts.slice(3)].join('.')).toString(
      'base64url',
    );
    const madeUp = Buffer.from(`p1.${endpointId}.3`).toString('base64url');
    for (const forged of [moved, madeUp]) {
      const refused = await client.get(`${pollPath}?cursor=${forged}`);
      expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    // Nothing was acknowledged by them; the real cursor goes on where it was.
    expect(await statuses()).toEqual(['pending', 'pending', 'pending']);
    const next = await client.get(`${pollPath}?cursor=${cursor}`);
    expect(next.body.data.map((m: any) => m.payload.n)).toEqual([1, 2]);
  });
});
