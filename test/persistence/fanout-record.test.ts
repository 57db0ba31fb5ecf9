import { DataSource } from 'typeorm';
import { EventEnvelope, newId, planMessages, RecipientEndpoint } from '@hookbase/domain';
import {
  createDataSource,
  EndpointRepository,
  RecipientRepository,
  EndpointSecretSealer,
  EventRepository,
} from '@hookbase/persistence';
import { generateSecret } from '@hookbase/signing';
import { createTestDatabase, testEnvironment } from '@hookbase/testing';
import { newEndpoint } from './new-endpoint';

// The fan-out plans an event's messages for the recipients it kept from an earlier batch and
// records them in one statement that checks, in the same snapshot, that the organizations'
// endpoints are still at the versions it planned for. Nothing may be recorded for recipients
// that changed in between: a new endpoint would miss the event, a deleted one would get it.
describe("the fan-out's record against the recipients' versions", () => {
  let database: { url: string; drop: () => Promise<void> };
  let dataSource: DataSource;
  let endpoints: EndpointRepository;
  /** The fan-out's reads of recipients. */
  let recipientReads: RecipientRepository;
  /** Another process's repository: its changes reach the first one only through the database. */
  let elsewhere: EndpointRepository;
  let events: EventRepository;

  beforeAll(async () => {
    database = await createTestDatabase(testEnvironment().databaseUrl);
    dataSource = createDataSource({ url: database.url, poolSize: 3 });
    await dataSource.initialize();
    const sealer = () => new EndpointSecretSealer({ key: Buffer.alloc(32, 7).toString('base64') });
    recipientReads = new RecipientRepository(dataSource);
    endpoints = new EndpointRepository(dataSource, sealer());
    elsewhere = new EndpointRepository(dataSource, sealer());
    events = new EventRepository(dataSource);
    for (const id of ['org_plan', 'org_none']) {
      await dataSource.query(
        `INSERT INTO organizations (id, name, plan, created_at, updated_at)
         VALUES ($1, $1, 'pro', now(), now())`,
        [id],
      );
    }
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const event = (organizationId: string): EventEnvelope => ({
    id: newId('evt'),
    organizationId,
    eventType: 'order.created',
    payload: { n: 1 },
    acceptedAt: new Date().toISOString(),
  });

  /** The endpoints an event's messages are stored for, as PostgreSQL has them. */
  const storedFor = async (eventId: string): Promise<string[]> =>
    (
      await dataSource.query<{ endpoint_id: string }[]>(
        'SELECT endpoint_id FROM messages WHERE event_id = $1 ORDER BY endpoint_id',
        [eventId],
      )
    ).map((row) => row.endpoint_id);
  const eventStored = async (eventId: string): Promise<boolean> =>
    (await dataSource.query('SELECT 1 FROM events WHERE id = $1', [eventId])).length === 1;

  /** Records `envelope` for the recipients this process keeps, against their versions. */
  const recordAsKept = async (envelope: EventEnvelope) => {
    const kept = recipientReads.keptRecipients([envelope.organizationId]);
    if (!kept) throw new Error(`nothing kept for ${envelope.organizationId}`);
    const planned = planMessages([envelope], kept.recipients);
    return events.recordEvents([envelope], planned, new Map(), kept.versions);
  };
  const ids = (recipients: readonly RecipientEndpoint[]) => recipients.map((r) => r.id).sort();

  it('records what was planned while the versions hold, and nothing once one moved', async () => {
    const first = await endpoints.create(newEndpoint('org_plan'), generateSecret());
    // Nothing is kept before the first read, for an organization with endpoints or without.
    expect(recipientReads.keptRecipients(['org_plan'])).toBeUndefined();
    expect(ids((await recipientReads.liveRecipients(['org_plan', 'org_none'])).recipients)).toEqual(
      [first.id],
    );
    // With its creation time: an event accepted before it is not its to receive.
    expect((await recipientReads.liveRecipients(['org_plan'])).recipients[0].createdAt).toBe(
      first.createdAt.getTime(),
    );
    expect(ids(recipientReads.keptRecipients(['org_plan', 'org_none'])!.recipients)).toEqual([
      first.id,
    ]);

    const one = event('org_plan');
    const recorded = await recordAsKept(one);
    expect(recorded?.get(one.id)?.map((m) => m.endpointId)).toEqual([first.id]);
    expect(await storedFor(one.id)).toEqual([first.id]);

    // A health write is no change of recipients: the versions still hold.
    await elsewhere.recordFailure(first.id, new Date());
    const two = event('org_plan');
    expect(await recordAsKept(two)).toBeDefined();
    expect(await storedFor(two.id)).toEqual([first.id]);

    // Another process adds an endpoint: what this one kept is out of date, and nothing of the
    // event planned for it is recorded, neither the event nor any message.
    const second = await elsewhere.create(newEndpoint('org_plan'), generateSecret());
    const three = event('org_plan');
    expect(await recordAsKept(three)).toBeUndefined();
    expect(await eventStored(three.id)).toBe(false);
    expect(await storedFor(three.id)).toEqual([]);
    // Read again, the recipients are current and the event is recorded for both.
    expect(ids((await recipientReads.liveRecipients(['org_plan'])).recipients)).toEqual(
      [first.id, second.id].sort(),
    );
    expect(await recordAsKept(three)).toBeDefined();
    expect(await storedFor(three.id)).toEqual([first.id, second.id].sort());

    // A deletion moves the version as well.
    await elsewhere.softDelete(second);
    const four = event('org_plan');
    expect(await recordAsKept(four)).toBeUndefined();
    expect(await eventStored(four.id)).toBe(false);
  });

  it('holds an organization without endpoints to having none', async () => {
    await recipientReads.liveRecipients(['org_none']);
    const quiet = event('org_none');
    const recorded = await recordAsKept(quiet);
    expect(recorded?.get(quiet.id)).toEqual([]);
    expect(await eventStored(quiet.id)).toBe(true);

    const arrived = await elsewhere.create(newEndpoint('org_none'), generateSecret());
    const next = event('org_none');
    expect(await recordAsKept(next)).toBeUndefined();
    expect(await eventStored(next.id)).toBe(false);
    await recipientReads.liveRecipients(['org_none']);
    await recordAsKept(next);
    expect(await storedFor(next.id)).toEqual([arrived.id]);
  });

  it('checks every organization of a batch, and an event recorded before stays as it was', async () => {
    const [plan, none] = [event('org_plan'), event('org_none')];
    await recipientReads.liveRecipients(['org_plan', 'org_none']);
    const kept = recipientReads.keptRecipients(['org_plan', 'org_none'])!;
    const planned = planMessages([plan, none], kept.recipients);
    // One of the two organizations changes: the whole batch is refused.
    await elsewhere.create(newEndpoint('org_plan'), generateSecret());
    expect(await events.recordEvents([plan, none], planned, new Map(), kept.versions)).toBe(
      undefined,
    );
    expect([await eventStored(plan.id), await eventStored(none.id)]).toEqual([false, false]);

    await recipientReads.liveRecipients(['org_plan', 'org_none']);
    const current = recipientReads.keptRecipients(['org_plan', 'org_none'])!;
    const first = await events.recordEvents(
      [plan, none],
      planMessages([plan, none], current.recipients),
      new Map(),
      current.versions,
    );
    // Recorded again (a record read twice): the messages stored the first time are answered.
    const again = await events.recordEvents(
      [plan],
      planMessages([plan], current.recipients),
      new Map(),
      current.versions,
    );
    expect(again?.get(plan.id)).toEqual(first?.get(plan.id));
    expect(again?.get(plan.id)?.length).toBeGreaterThan(0);
  });

  it('leaves an event with a polling recipient to the record that takes poll places', async () => {
    await dataSource.query(
      `INSERT INTO organizations (id, name, plan, created_at, updated_at)
       VALUES ('org_poll', 'poll', 'pro', now(), now())`,
    );
    const polling = await endpoints.create(
      newEndpoint('org_poll', { kind: 'polling', url: null }),
      generateSecret(),
    );
    await recipientReads.liveRecipients(['org_poll']);
    const polled = event('org_poll');
    expect(await recordAsKept(polled)).toBeUndefined();
    expect(await eventStored(polled.id)).toBe(false);
    const planned = planMessages(
      [polled],
      (await recipientReads.liveRecipients(['org_poll'])).recipients,
    );
    const recorded = await events.recordEvents([polled], planned, new Map());
    expect(recorded.get(polled.id)?.map((m) => [m.endpointId, m.polled])).toEqual([
      [polling.id, true],
    ]);
  });

  // The payloads of a batch go to PostgreSQL as one JSON array, the other columns as arrays of
  // their own: every event must get its own payload, whatever the texts, on each way of recording.
  it('stores each event with its own payload and columns, on every way of recording', async () => {
    await dataSource.query(
      `INSERT INTO organizations (id, name, plan, created_at, updated_at)
       VALUES ('org_text', 'text', 'pro', now(), now())`,
    );
    await endpoints.create(newEndpoint('org_text'), generateSecret());
    const payloads: Record<string, unknown>[] = [
      { quote: 'say "hi"', slash: 'a\\b\\"c', json: '{"a":[1,2]},{"b":null}' },
      {},
      { unicode: 'café 🚀 \u2028 \t\n', nested: { list: [1, -2.5, 1e21, true, null, [[]], {}] } },
      { long: 'x'.repeat(5_000), 'key "quoted"': { 'k\\': ['"', '\\', ','] } },
    ];
    const batch = (eventType: string, channels?: string[]) =>
      payloads.map((payload, i) => ({
        ...event('org_text'),
        eventType: `${eventType}.${i}`,
        payload,
        ...(i % 2 === 1 && channels ? { channels } : {}),
      }));
    const stored = async (envelopes: EventEnvelope[]) => {
      const rows = await dataSource.query<
        { id: string; event_type: string; payload: unknown; channels: unknown }[]
      >('SELECT id, event_type, payload, channels FROM events WHERE id = ANY($1)', [
        envelopes.map((e) => e.id),
      ]);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return envelopes.map((e) => {
        const row = byId.get(e.id);
        return row && [row.event_type, row.payload, row.channels];
      });
    };
    const expected = (envelopes: EventEnvelope[]) =>
      envelopes.map((e) => [e.eventType, e.payload, e.channels ?? []]);

    // One statement, without recipients' versions.
    const plain = batch('plain', ['a', 'b']);
    await events.recordEvents(plain, []);
    expect(await stored(plain)).toEqual(expected(plain));

    // One statement, against the recipients' versions; one event of it recorded before.
    await recipientReads.liveRecipients(['org_text']);
    const versioned = [plain[2], ...batch('versioned', ['c'])];
    const kept = recipientReads.keptRecipients(['org_text'])!;
    expect(
      await events.recordEvents(
        versioned,
        planMessages(versioned, kept.recipients),
        new Map(),
        kept.versions,
      ),
    ).toBeDefined();
    expect(await stored(versioned)).toEqual(expected(versioned));

    // The transaction that takes poll places.
    await endpoints.create(
      newEndpoint('org_text', { kind: 'polling', url: null }),
      generateSecret(),
    );
    const polled = batch('polled', ['d']);
    const { recipients } = await recipientReads.liveRecipients(['org_text']);
    await events.recordEvents(polled, planMessages(polled, recipients), new Map());
    expect(await stored(polled)).toEqual(expected(polled));

    // A batch whose payloads make more text than one statement takes goes in parts (here every
    // event alone, the limit being lowered): each event still gets its payload and its messages.
    const limit = events.payloadsTextLimit;
    events.payloadsTextLimit = 60;
    try {
      const parted = batch('parted');
      const recorded = await events.recordEvents(parted, planMessages(parted, recipients));
      expect(await stored(parted)).toEqual(expected(parted));
      for (const e of parted) {
        expect(
          recorded
            .get(e.id)
            ?.map((m) => m.endpointId)
            .sort(),
        ).toEqual(await storedFor(e.id));
        expect(await storedFor(e.id)).toHaveLength(recipients.length);
      }
      // Against the recipients' versions, with only the HTTP endpoint kept as a recipient.
      const versionedParts = batch('versioned-parts');
      const current = recipientReads.keptRecipients(['org_text'])!;
      const http = current.recipients.filter((r) => r.kind !== 'polling');
      expect(
        await events.recordEvents(
          versionedParts,
          planMessages(versionedParts, http),
          new Map(),
          current.versions,
        ),
      ).toBeDefined();
      expect(await stored(versionedParts)).toEqual(expected(versionedParts));
      for (const e of versionedParts) expect(await storedFor(e.id)).toEqual(ids(http));
    } finally {
      events.payloadsTextLimit = limit;
    }
  });

  it('keeps the routing an edit or a deletion replaced, for events accepted before it', async () => {
    await dataSource.query(
      `INSERT INTO organizations (id, name, plan, created_at, updated_at)
       VALUES ('org_history', 'history', 'pro', now(), now())`,
    );
    const orders = { eventTypes: ['order.created'] };
    const edited = await endpoints.create(newEndpoint('org_history', orders), generateSecret());
    const deleted = await endpoints.create(newEndpoint('org_history', orders), generateSecret());
    const untouched = await endpoints.create(newEndpoint('org_history', orders), generateSecret());
    const before = await recipientReads.liveRecipients(['org_history']);
    expect(before.routingChangedAt.get('org_history')).toBe(-Infinity);

    const earlier = event('org_history');
    // Neither a health write nor a change of anything but the routing is a routing change.
    await elsewhere.recordFailure(untouched.id, new Date());
    await elsewhere.save(Object.assign(untouched, { url: 'https://moved.example/hook' }));
    expect(await recipientReads.pastRoutings(['org_history'], new Date(0))).toEqual([]);
    // Through the repository, as the API changes them.
    await elsewhere.save(Object.assign(edited, { eventTypes: ['user.created'] }));
    await elsewhere.softDelete(deleted);

    const now = await recipientReads.liveRecipients(['org_history']);
    expect(ids(now.recipients)).toEqual([edited.id, untouched.id].sort());
    const changedAt = now.routingChangedAt.get('org_history')!;
    expect(changedAt).toBeGreaterThan(Date.parse(earlier.acceptedAt));
    // Kept as read, with the change time.
    expect(
      recipientReads.keptRecipients(['org_history'])!.routingChangedAt.get('org_history'),
    ).toBe(changedAt);
    const past = await recipientReads.pastRoutings(['org_history'], new Date(earlier.acceptedAt));
    expect(past.map((r) => [r.id, r.eventTypes])).toEqual([
      [edited.id, ['order.created']],
      [deleted.id, ['order.created']],
    ]);
    expect(past.every((r) => r.replacedAt! > Date.parse(earlier.acceptedAt))).toBe(true);
    expect((await recipientReads.pastRoutings(['org_history'], new Date(changedAt))).length).toBe(
      0,
    );
    expect(
      (await recipientReads.pastRoutings(['org_history'], new Date(0), [deleted.id])).map(
        (r) => r.id,
      ),
    ).toEqual([deleted.id]);

    // An event accepted before the changes reaches all three as they were; one after, the
    // endpoints as they are now.
    const later = { ...event('org_history'), acceptedAt: new Date(changedAt + 1).toISOString() };
    const planned = planMessages([earlier, later], [...now.recipients, ...past]);
    await events.recordEvents([earlier, later], planned);
    expect(await storedFor(earlier.id)).toEqual([edited.id, deleted.id, untouched.id].sort());
    expect(await storedFor(later.id)).toEqual([untouched.id]);
  });
});
