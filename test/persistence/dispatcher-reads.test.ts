import { DataSource } from 'typeorm';
import { newId, planMessages } from '@hookbase/domain';
import {
  createDataSource,
  EndpointEntity,
  EndpointRepository,
  RecipientRepository,
  EndpointSecretSealer,
  EventRepository,
  FifoLaneRepository,
  NewEndpoint,
} from '@hookbase/persistence';
import { generateSecret } from '@hookbase/signing';
import { createTestDatabase, testEnvironment } from '@hookbase/testing';
import { newEndpoint } from './new-endpoint';

// The dispatcher reads endpoints and their signing secrets for every intake through named
// statements instead of TypeORM's query builder: they must read exactly what TypeORM reads.
describe("the dispatcher's reads of endpoints and secrets", () => {
  let database: { url: string; drop: () => Promise<void> };
  let dataSource: DataSource;
  let endpoints: EndpointRepository;
  /** The fan-out's reads of recipients. */
  let recipientReads: RecipientRepository;

  beforeAll(async () => {
    database = await createTestDatabase(testEnvironment().databaseUrl);
    dataSource = createDataSource({ url: database.url, poolSize: 3 });
    await dataSource.initialize();
    recipientReads = new RecipientRepository(dataSource);
    endpoints = new EndpointRepository(
      dataSource,
      new EndpointSecretSealer({ key: Buffer.alloc(32, 7).toString('base64') }),
    );
    await dataSource.query(
      `INSERT INTO organizations (id, name, plan, created_at, updated_at)
       VALUES ('org_reads', 'reads', 'pro', now(), now())`,
    );
    await dataSource.query(
      `INSERT INTO applications (id, organization_id, name, created_at, updated_at)
       VALUES ('app_reads', 'org_reads', 'reads', now(), now())`,
    );
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** Changes an endpoint without giving it a new configuration version (the trigger off). */
  const unversioned = async (sql: string, id: string) => {
    await dataSource.query('ALTER TABLE endpoints DISABLE TRIGGER endpoints_config_version');
    try {
      await dataSource.query(sql, [id]);
    } finally {
      await dataSource.query('ALTER TABLE endpoints ENABLE TRIGGER endpoints_config_version');
    }
  };

  const endpoint = (overrides: Partial<NewEndpoint> = {}) => newEndpoint('org_reads', overrides);

  it('records the successes of many endpoints in one statement, the latest of each', async () => {
    const created = await Promise.all(
      Array.from({ length: 60 }, () => endpoints.create(endpoint(), generateSecret())),
    );
    const ids = created.map((e) => e.id);
    for (const id of ids.slice(0, 2))
      await endpoints.recordFailure(id, new Date('2026-12-01T09:00:00Z'));
    const t = (minute: number) => new Date(Date.UTC(2026, 11, 1, 10, minute));
    // The same endpoint twice in one batch: its latest success is kept, whatever the order.
    await endpoints.recordSuccesses([
      { endpointId: ids[0], at: t(5) },
      { endpointId: ids[0], at: t(3) },
      { endpointId: ids[1], at: t(2) },
      { endpointId: ids[1], at: t(4) },
    ]);
    const health = async () =>
      (await dataSource.query(
        `SELECT id, consecutive_failures, failing_since, last_success_at FROM endpoints
          WHERE id = ANY($1) ORDER BY id`,
        [ids],
      )) as {
        id: string;
        consecutive_failures: number;
        failing_since: Date | null;
        last_success_at: Date | null;
      }[];
    const byId = new Map((await health()).map((row) => [row.id, row]));
    expect(byId.get(ids[0])).toMatchObject({
      consecutive_failures: 0,
      failing_since: null,
      last_success_at: t(5),
    });
    expect(byId.get(ids[1])).toMatchObject({
      consecutive_failures: 0,
      failing_since: null,
      last_success_at: t(4),
    });
    expect(byId.get(ids[2])).toMatchObject({ last_success_at: null });

    // Every endpoint of a batch, in one statement.
    await endpoints.recordSuccesses(ids.map((endpointId) => ({ endpointId, at: t(10) })));
    const after = await health();
    expect(after.filter((row) => row.last_success_at?.getTime() === t(10).getTime())).toHaveLength(
      60,
    );
  });

  it('records the failures of many endpoints in one statement, each counted', async () => {
    const [a, b, gone] = await Promise.all(
      [0, 1, 2].map(() => endpoints.create(endpoint(), generateSecret())),
    );
    await endpoints.softDelete(gone);
    await endpoints.recordFailure(b.id, new Date('2026-12-01T08:00:00Z'));
    const t = (minute: number) => new Date(Date.UTC(2026, 11, 1, 10, minute));
    const streaks = await endpoints.recordFailures([
      { endpointId: a.id, at: t(5) },
      { endpointId: b.id, at: t(1) },
      { endpointId: a.id, at: t(2) },
      { endpointId: gone.id, at: t(3) },
      { endpointId: a.id, at: t(4) },
    ]);
    // a: three failures, its streak begun at the earliest; b: one more after the one before,
    // its streak begun then; the deleted endpoint is neither written nor answered.
    expect(streaks.get(a.id)).toMatchObject({ consecutiveFailures: 3, failingSince: t(2) });
    expect(streaks.get(b.id)).toMatchObject({
      consecutiveFailures: 2,
      failingSince: new Date('2026-12-01T08:00:00Z'),
      status: 'active',
      autoDisableAfterMs: null,
    });
    expect(streaks.has(gone.id)).toBe(false);
    const [row] = await dataSource.query(
      'SELECT consecutive_failures FROM endpoints WHERE id = $1',
      [gone.id],
    );
    expect(row.consecutive_failures).toBe(0);
  });

  it('reads every column of an endpoint as TypeORM does, deleted ones included', async () => {
    const plain = await endpoints.create(endpoint(), generateSecret());
    const full = await endpoints.create(
      endpoint({
        applicationId: 'app_reads',
        description: 'every column set',
        config: { region: 'eu' },
        eventTypes: ['order.created', 'order.paid'],
        channels: ['eu', 'us'],
        filter: { all: [{ path: 'amount', op: 'gt', value: 10 }] },
        status: 'disabled',
        fifoEnabled: true,
        rateLimitPerSecond: 25,
        deliveryOptions: { timeoutMs: 2_000 },
        consecutiveFailures: 3,
        failingSince: new Date('2026-11-30T10:00:00.123Z'),
        lastSuccessAt: new Date('2026-11-29T09:00:00.456Z'),
        disabledReason: 'failing',
        disabledAt: new Date('2026-12-01T00:00:00Z'),
      }),
      generateSecret(),
    );
    await endpoints.softDelete(plain);
    const ids = [plain.id, full.id, 'ep_missing'];

    const read = await endpoints.findByIds(ids);
    const byTypeorm = await dataSource.getRepository(EndpointEntity).find({
      where: ids.map((id) => ({ id })),
    });

    expect(read).toHaveLength(2);
    const sort = (list: EndpointEntity[]) => [...list].sort((a, b) => a.id.localeCompare(b.id));
    expect(sort(read)).toEqual(sort(byTypeorm));
    expect(read.every((entity) => entity instanceof EndpointEntity)).toBe(true);
    const deleted = read.find((entity) => entity.id === plain.id)!;
    expect(deleted.deletedAt).toBeInstanceOf(Date);
  });

  it('reads the secrets that sign now, newest first, opened, and none that retired', async () => {
    const first = generateSecret();
    const second = generateSecret();
    const third = generateSecret();
    const created = await endpoints.create(endpoint(), first);
    const other = await endpoints.create(endpoint(), generateSecret());
    // `second` takes over and `first` keeps signing for an hour; then `third` takes over at once,
    // which retires both.
    await endpoints.rotateSecret(created.id, second, 3_600);
    let secrets = await endpoints.signingSecrets([created.id, other.id], new Date());
    expect(secrets.get(created.id)).toEqual([second, first]);
    expect(secrets.get(other.id)).toHaveLength(1);

    await endpoints.rotateSecret(created.id, third, 0);
    secrets = await endpoints.signingSecrets([created.id], new Date(Date.now() + 1_000));
    expect(secrets.get(created.id)).toEqual([third]);
  });

  it("reads an organization's live recipients, or only the named ones among them", async () => {
    const live = await endpoints.create(endpoint(), generateSecret());
    const paused = await endpoints.create(endpoint({ status: 'paused' }), generateSecret());
    const disabled = await endpoints.create(endpoint({ status: 'disabled' }), generateSecret());
    const deleted = await endpoints.create(endpoint(), generateSecret());
    await endpoints.softDelete(deleted);
    const organizationId = live.organizationId;
    const mine = (list: { id: string }[]) =>
      list
        .map((e) => e.id)
        .filter((id) => [live.id, paused.id, disabled.id, deleted.id].includes(id))
        .sort();

    expect(mine((await recipientReads.liveRecipients([organizationId])).recipients)).toEqual(
      [live.id, paused.id].sort(),
    );
    const { recipients: named } = await recipientReads.liveRecipients(
      [organizationId],
      [paused.id, disabled.id, deleted.id, 'ep_missing'],
    );
    expect(named.map((e) => e.id)).toEqual([paused.id]);
    expect(named[0]).toMatchObject({ organizationId, status: 'paused', kind: 'http' });
    expect((await recipientReads.liveRecipients([organizationId], [])).recipients).toEqual([]);
    expect((await recipientReads.liveRecipients(['org_other'], [live.id])).recipients).toEqual([]);
  });

  it('reads endpoints and the secrets that sign now in one statement, as the two reads do apart', async () => {
    const created = await endpoints.create(endpoint(), generateSecret());
    await endpoints.rotateSecret(created.id, generateSecret(), 3_600);
    const deleted = await endpoints.create(endpoint({ status: 'paused' }), generateSecret());
    await endpoints.softDelete(deleted);
    const ids = [created.id, deleted.id, 'ep_missing'];
    const now = new Date();

    const read = await endpoints.forDelivery(ids, now);
    const apart = await endpoints.findByIds(ids);
    expect([...read.endpoints.keys()].sort()).toEqual([created.id, deleted.id].sort());
    for (const one of apart) {
      expect(read.endpoints.get(one.id)).toEqual(one);
      expect(read.endpoints.get(one.id)).toBeInstanceOf(EndpointEntity);
      expect(read.endpoints.get(one.id)).not.toHaveProperty('signingSecrets');
    }
    expect(read.secrets).toEqual(await endpoints.signingSecrets(ids, now));
    expect(read.secrets.get(created.id)).toHaveLength(2);
    expect(read.secrets.has('ep_missing')).toBe(false);

    // Later, past the overlap: only the newest signs.
    const later = await endpoints.forDelivery([created.id], new Date(Date.now() + 3_601_000));
    expect(read.secrets.get(created.id)![0]).toBe(later.secrets.get(created.id)![0]);
    expect(later.secrets.get(created.id)).toHaveLength(1);
  });

  it('keeps what it read by configuration version, reading health and any change at once', async () => {
    const first = generateSecret();
    const created = await endpoints.create(endpoint(), first);
    // Another process: its own repository over the same database.
    const elsewhere = new EndpointRepository(
      dataSource,
      new EndpointSecretSealer({ key: Buffer.alloc(32, 7).toString('base64') }),
    );
    const versionOf = async () =>
      (
        await dataSource.query('SELECT config_version AS v FROM endpoints WHERE id = $1', [
          created.id,
        ])
      )[0].v as string;
    const read = async (at = new Date()) => {
      const { endpoints: byId, secrets } = await endpoints.forDelivery([created.id], at);
      return { endpoint: byId.get(created.id)!, secrets: secrets.get(created.id) };
    };

    const before = await read();
    expect(before.endpoint.url).toBe('https://receiver.example/hook');
    expect(before.secrets).toEqual([first]);
    expect(Object.isFrozen(before.endpoint.retry)).toBe(true);

    // Health is written by every attempt: it is no change of configuration, and is read fresh.
    const version = await versionOf();
    await elsewhere.recordFailure(created.id, new Date('2026-12-01T10:00:00Z'));
    expect(await versionOf()).toBe(version);
    expect((await read()).endpoint).toMatchObject({
      consecutiveFailures: 1,
      failingSince: new Date('2026-12-01T10:00:00Z'),
    });
    await elsewhere.recordSuccesses([
      { endpointId: created.id, at: new Date('2026-12-01T10:01:00Z') },
    ]);
    expect(await versionOf()).toBe(version);
    expect((await read()).endpoint).toMatchObject({
      consecutiveFailures: 0,
      failingSince: null,
      lastSuccessAt: new Date('2026-12-01T10:01:00Z'),
    });

    // What is kept is what is used: a change made without a new version is not seen...
    await unversioned(
      `UPDATE endpoints SET url = 'https://unseen.example/' WHERE id = $1`,
      created.id,
    );
    expect((await read()).endpoint.url).toBe('https://receiver.example/hook');

    // ...and every change made by anyone takes a new version, so the next read has it.
    const changed = (await elsewhere.findLive(created.organizationId, created.id))!;
    changed.url = 'https://moved.example/hook';
    await elsewhere.save(changed);
    expect(await versionOf()).not.toBe(version);
    expect((await read()).endpoint.url).toBe('https://moved.example/hook');
    await dataSource.query(`UPDATE endpoints SET status = 'paused' WHERE id = $1`, [created.id]);
    expect((await read()).endpoint.status).toBe('paused');

    // A rotated secret is a change of the endpoint; the retired one signs until its overlap ends.
    const second = generateSecret();
    await elsewhere.rotateSecret(created.id, second, 3_600);
    expect((await read()).secrets).toEqual([second, first]);
    expect((await read(new Date(Date.now() + 3_601_000))).secrets).toEqual([second]);
    await dataSource.query('DELETE FROM endpoint_secrets WHERE endpoint_id = $1', [created.id]);
    expect((await read()).secrets).toBeUndefined();

    await elsewhere.softDelete(changed);
    expect((await read()).endpoint.deletedAt).toBeInstanceOf(Date);
  });

  it("takes versions and health from the dispatcher's intake, and reads in full only changes", async () => {
    const created = await endpoints.create(endpoint(), generateSecret());
    const event = {
      id: newId('evt'),
      organizationId: 'org_reads',
      eventType: 'order.created',
      payload: {},
      acceptedAt: new Date().toISOString(),
    };
    const [message] = planMessages(
      [event],
      [{ ...created, retry: created.retry, createdAt: created.createdAt.getTime() }],
    );
    await new EventRepository(dataSource).recordEvents([event], [message]);
    const lanes = new FifoLaneRepository(dataSource);
    const intake = async () =>
      (await lanes.intake([{ messageId: message.messageId, seq: '1' }])).endpoints;
    const versionOf = async () =>
      (
        await dataSource.query('SELECT config_version AS v FROM endpoints WHERE id = $1', [
          created.id,
        ])
      )[0].v as string;

    // The intake reads each found message's endpoint: its version and its health.
    await endpoints.recordFailure(created.id, new Date('2026-12-01T10:00:00Z'));
    const read = await intake();
    expect(read).toEqual([
      {
        id: created.id,
        version: await versionOf(),
        consecutiveFailures: 1,
        failingSince: new Date('2026-12-01T10:00:00Z'),
        lastSuccessAt: null,
      },
    ]);
    const forDelivery = (versions: typeof read, ids = [created.id]) =>
      endpoints.forDelivery(ids, new Date(), versions);
    expect((await forDelivery(read)).endpoints.get(created.id)).toMatchObject({
      url: 'https://receiver.example/hook',
      consecutiveFailures: 1,
    });

    // Given versions are not read again: the health given is the health answered, and an
    // endpoint not among them is taken as gone.
    const given = [{ ...read[0], consecutiveFailures: 7 }];
    expect((await forDelivery(given)).endpoints.get(created.id)?.consecutiveFailures).toBe(7);
    expect((await forDelivery([], [created.id])).endpoints.size).toBe(0);
    await unversioned(
      `UPDATE endpoints SET url = 'https://unseen.example/' WHERE id = $1`,
      created.id,
    );
    expect((await forDelivery(await intake())).endpoints.get(created.id)?.url).toBe(
      'https://receiver.example/hook',
    );

    // A change gives a new version in the intake's answer, and the endpoint is read in full.
    await dataSource.query(`UPDATE endpoints SET url = 'https://moved.example/' WHERE id = $1`, [
      created.id,
    ]);
    const moved = await intake();
    expect(moved[0].version).not.toBe(read[0].version);
    expect((await forDelivery(moved)).endpoints.get(created.id)?.url).toBe(
      'https://moved.example/',
    );
  });

  it("reads in the intake each asked event's payload once, for messages still to send from the stream", async () => {
    const created = await Promise.all(
      [false, false, true].map((fifoEnabled) =>
        endpoints.create(endpoint({ fifoEnabled }), generateSecret()),
      ),
    );
    const recipients = created.map((e) => ({ ...e, createdAt: e.createdAt.getTime() }));
    const eventOf = (payload: Record<string, unknown>) => ({
      id: newId('evt'),
      organizationId: 'org_reads',
      eventType: 'order.created',
      payload,
      acceptedAt: new Date().toISOString(),
    });
    // One event to every endpoint, one to the FIFO endpoint only, one whose payload is purged,
    // and one not asked for.
    const [toAll, toLane, purged, unasked] = [1, 2, 3, 4].map((n) => eventOf({ n, zeta: 'z' }));
    const messages = [
      ...planMessages([toAll, purged, unasked], recipients.slice(0, 2)),
      ...planMessages([toAll, toLane], recipients.slice(2)),
    ];
    await new EventRepository(dataSource).recordEvents([toAll, toLane, purged, unasked], messages);
    await new EventRepository(dataSource).purgePayload('org_reads', purged.id);
    const lanes = new FifoLaneRepository(dataSource);
    const { payloads, states } = await lanes.intake(
      messages.map((message, index) => ({ messageId: message.messageId, seq: String(index + 1) })),
      [toAll.id, toAll.id, toLane.id, purged.id, newId('evt')],
    );
    expect(states.size).toBe(messages.length);
    expect([...payloads.entries()]).toEqual([
      [toAll.id, { payload: toAll.payload, bytes: JSON.stringify(toAll.payload).length }],
    ]);

    // None for an event whose messages have all left the stream.
    await dataSource.query(
      `UPDATE messages SET route = 'schedule', status = 'awaiting_retry' WHERE event_id = $1`,
      [toAll.id],
    );
    const later = await lanes.intake(
      messages.map((message, index) => ({ messageId: message.messageId, seq: String(index + 1) })),
      [toAll.id],
    );
    expect(later.payloads.size).toBe(0);
  });

  it("reads payloads in the intake only while they fit the bytes given, in their first messages' order, and the others by event later", async () => {
    const created = await endpoints.create(endpoint(), generateSecret());
    const recipients = [{ ...created, createdAt: created.createdAt.getTime() }];
    // Keys out of jsonb's order and text of two bytes a character: sizes are bytes as published.
    const events = [1, 2, 3].map((n) => ({
      id: newId('evt'),
      organizationId: 'org_reads',
      eventType: 'order.created',
      payload: { zeta: n, alpha: 'é'.repeat(500) },
      acceptedAt: new Date().toISOString(),
    }));
    const bytes = Buffer.byteLength(JSON.stringify(events[0].payload));
    expect(bytes).toBeGreaterThan(1_000);
    const messages = planMessages(events, recipients);
    const eventRepository = new EventRepository(dataSource);
    await eventRepository.recordEvents(events, messages);
    const lanes = new FifoLaneRepository(dataSource);
    // Offsets in the reverse of the events' order: the last event's message comes first.
    const asked = messages.map((message, index) => ({
      messageId: message.messageId,
      seq: String(100 - index),
    }));
    const ids = events.map((event) => event.id);
    const within = async (payloadBytes: number) =>
      [...(await lanes.intake(asked, ids, payloadBytes)).payloads.keys()].sort();

    expect(await within(2 * bytes)).toEqual([ids[2], ids[1]].sort());
    expect(await within(2 * bytes - 1)).toEqual([ids[2]]);
    expect(await within(bytes - 1)).toEqual([]);
    expect(await within(3 * bytes)).toEqual([...ids].sort());
    const [first] = (await lanes.intake(asked, [ids[2]], bytes)).payloads.values();
    expect(first).toEqual({ payload: events[2].payload, bytes });

    // The others, read by event when their attempts are about to start: as published, key order
    // kept, and none for a purged payload or an event not stored.
    await eventRepository.purgePayload('org_reads', ids[1]);
    const read = await eventRepository.payloads([ids[0], ids[1], ids[0], newId('evt')]);
    expect([...read.keys()]).toEqual([ids[0]]);
    expect(JSON.stringify(read.get(ids[0]))).toBe(JSON.stringify(events[0].payload));
  });

  it("keeps an organization's recipients until any of its endpoints changes", async () => {
    await dataSource.query(
      `INSERT INTO organizations (id, name, plan, created_at, updated_at)
       VALUES ('org_kept', 'kept', 'pro', now(), now())`,
    );
    const mine = (overrides: Partial<NewEndpoint> = {}) =>
      endpoints.create(endpoint({ organizationId: 'org_kept', ...overrides }), generateSecret());
    const elsewhere = new EndpointRepository(
      dataSource,
      new EndpointSecretSealer({ key: Buffer.alloc(32, 7).toString('base64') }),
    );
    const recipients = async () =>
      (await recipientReads.liveRecipients(['org_kept', 'org_reads'])).recipients
        .filter((recipient) => recipient.organizationId === 'org_kept')
        .map((recipient) => `${recipient.id} ${recipient.eventTypes.join(',')}`)
        .sort();
    const first = await mine({ eventTypes: ['a'] });
    expect(await recipients()).toEqual([`${first.id} a`]);

    // What is kept is what is used: a change made without a new version is not seen...
    await unversioned(`UPDATE endpoints SET event_types = '{unseen}' WHERE id = $1`, first.id);
    expect(await recipients()).toEqual([`${first.id} a`]);

    // ...and any change of any endpoint of the organization, by anyone, is read at once.
    const second = await elsewhere.create(
      endpoint({ organizationId: 'org_kept', eventTypes: ['b'] }),
      generateSecret(),
    );
    expect(await recipients()).toEqual([`${first.id} unseen`, `${second.id} b`].sort());
    await dataSource.query(`UPDATE endpoints SET event_types = '{c}' WHERE id = $1`, [second.id]);
    expect(await recipients()).toEqual([`${first.id} unseen`, `${second.id} c`].sort());
    await dataSource.query(`UPDATE endpoints SET status = 'disabled' WHERE id = $1`, [first.id]);
    expect(await recipients()).toEqual([`${second.id} c`]);
    await elsewhere.softDelete(second);
    expect(await recipients()).toEqual([]);
    const third = await mine({ eventTypes: ['d'] });
    expect(await recipients()).toEqual([`${third.id} d`]);
    await dataSource.query('DELETE FROM endpoints WHERE id = $1', [third.id]);
    expect(await recipients()).toEqual([]);

    // Health writes are no change: the recipients stay as kept.
    const fourth = await mine({ eventTypes: ['e'] });
    expect(await recipients()).toEqual([`${fourth.id} e`]);
    await elsewhere.recordFailure(fourth.id, new Date());
    expect(await recipients()).toEqual([`${fourth.id} e`]);
    expect(Object.isFrozen((await recipientReads.liveRecipients(['org_kept'])).recipients[0])).toBe(
      true,
    );
  });
});
