import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

interface MessageRow {
  id: string;
  eventId: string;
  eventType: string;
  createdAt: string;
}

/**
 * The message log's time filter: `createdAfter` (inclusive) and `createdBefore` (exclusive),
 * combined with the other filters and with cursor paging.
 */
describe('the message log filters by creation time', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let client: ApiClient;
  let messagesPath: string;
  const firstBatch = new Set<string>();
  const secondBatch = new Set<string>();
  const eventTypeOf = new Map<string, string>();
  let boundary: string;

  /** Every page of the log for `query`, following `nextCursor`, with a small page size. */
  async function allPages(query: Record<string, string>): Promise<MessageRow[]> {
    const rows: MessageRow[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const params = new URLSearchParams({ ...query, limit: '2', ...(cursor ? { cursor } : {}) });
      const response = await client.get(`${messagesPath}?${params}`);
      expect(response.status).toBe(200);
      rows.push(...(response.body.data as MessageRow[]));
      cursor = response.body.nextCursor ?? undefined;
      if (!cursor) return rows;
    }
    throw new Error('the log did not end after 50 pages');
  }

  async function publish(count: number, into: Set<string>) {
    for (let i = 0; i < count; i++) {
      const eventType = i % 2 === 0 ? 'order.created' : 'order.paid';
      const response = await client.post('/v1/events', { eventType, payload: { i } });
      expect(response.status).toBe(202);
      into.add(response.body.data.id);
      eventTypeOf.set(response.body.data.id, eventType);
    }
    await pollUntil(
      async () => {
        const listed = await allPages({});
        return [...into].every((eventId) => listed.some((m) => m.eventId === eventId));
      },
      { timeoutMs: 60_000, description: `the log shows the ${count} new messages` },
    );
  }

  beforeAll(async () => {
    const receiverUrl = await receiver.start();
    stack = await startStack();
    const tenant = await createTenant(stack.url, stack.adminToken);
    client = tenant.client;
    messagesPath = `/api/organizations/${tenant.organizationId}/messages`;
    const endpoint = await client.post(
      `/api/organizations/${tenant.organizationId}/webhook-endpoints`,
      { url: `${receiverUrl}/hooks`, eventTypes: ['order.created', 'order.paid'] },
    );
    expect(endpoint.status).toBe(201);

    await publish(5, firstBatch);
    // The boundary lies after every message of the first batch (the log shows milliseconds;
    // one more covers the microseconds the database keeps) ...
    const latest = Math.max(...(await allPages({})).map((m) => Date.parse(m.createdAt)));
    boundary = new Date(latest + 1).toISOString();
    // ... and before every message of the second, published once the clock has passed it.
    await pollUntil(() => Date.now() > Date.parse(boundary) + 1, {
      timeoutMs: 5_000,
      description: 'the clock passes the boundary',
    });
    await publish(5, secondBatch);
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  const eventIds = (rows: MessageRow[]) => rows.map((m) => m.eventId).sort();
  const sorted = (ids: Iterable<string>) => [...ids].sort();

  it('createdBefore returns exactly the first batch, across pages', async () => {
    const rows = await allPages({ createdBefore: boundary });
    expect(eventIds(rows)).toEqual(sorted(firstBatch));
    expect(new Set(rows.map((m) => m.id)).size).toBe(rows.length);
  });

  it('createdAfter returns exactly the second batch, across pages', async () => {
    const rows = await allPages({ createdAfter: boundary });
    expect(eventIds(rows)).toEqual(sorted(secondBatch));
    expect(new Set(rows.map((m) => m.id)).size).toBe(rows.length);
  });

  it('a window holding both batches returns all, newest first; an empty window returns none', async () => {
    const all = await allPages({
      createdAfter: new Date(Date.now() - 3_600_000).toISOString(),
      createdBefore: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(eventIds(all)).toEqual(sorted([...firstBatch, ...secondBatch]));
    const times = all.map((m) => Date.parse(m.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(await allPages({ createdAfter: boundary, createdBefore: boundary })).toEqual([]);
  });

  it('combines with the other filters, in an offset other than UTC', async () => {
    const inParis = new Date(Date.parse(boundary) + 3_600_000).toISOString().replace('Z', '+01:00');
    const rows = await allPages({ createdAfter: inParis, eventType: 'order.created' });
    const expected = [...secondBatch].filter((id) => eventTypeOf.get(id) === 'order.created');
    expect(expected.length).toBeGreaterThan(0);
    expect(eventIds(rows)).toEqual(sorted(expected));
  });

  it('takes any ISO 8601 offset, even beyond what PostgreSQL accepts, as its instant', async () => {
    // The boundary, written 18:26 ahead of UTC: PostgreSQL itself refuses offsets past ±15:59.
    const far = new Date(Date.parse(boundary) + (18 * 60 + 26) * 60_000)
      .toISOString()
      .replace('Z', '+18:26');
    const rows = await allPages({ createdAfter: far });
    expect(eventIds(rows)).toEqual(sorted(secondBatch));
    const ancient = await client.get(
      `${messagesPath}?${new URLSearchParams({ createdBefore: '1209-02-04T15:45:38+18:26' })}`,
    );
    expect({ status: ancient.status, data: ancient.body.data }).toEqual({ status: 200, data: [] });
  });

  it('answers 400 VALIDATION_FAILED naming a bad timestamp or a reversed window', async () => {
    const bad = await client.get(`${messagesPath}?createdAfter=yesterday`);
    expect({ status: bad.status, code: bad.body.error?.code }).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    expect(bad.body.error.details.issues).toEqual([
      expect.objectContaining({ path: 'createdAfter' }),
    ]);
    const reversed = await client.get(
      `${messagesPath}?${new URLSearchParams({
        createdAfter: '2026-01-02T00:00:00Z',
        createdBefore: '2026-01-01T00:00:00Z',
      })}`,
    );
    expect({ status: reversed.status, code: reversed.body.error?.code }).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    expect(reversed.body.error.details.issues).toEqual([
      expect.objectContaining({ path: 'createdBefore' }),
    ]);
  });
});
