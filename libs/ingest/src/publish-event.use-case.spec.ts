import { loadConfig } from '@hookbase/config';
import { DomainError, EventEnvelope, eventFingerprint, PublishEventInput } from '@hookbase/domain';
import { KafkaProducer, ProducedRecord, PublishTimeoutError, topicNames } from '@hookbase/kafka';
import { EventTypeCatalog, IdempotencyRepository, Reservation } from '@hookbase/persistence';
import { ApplicationLookup } from './application-lookup';
import {
  PAYLOAD_JSON,
  PublishEvent,
  PublishOutcome,
  ReadEventInput,
} from './publish-event.use-case';

/** A PublishEvent over stand-ins that record what would have gone to Kafka and PostgreSQL. */
function setUp(
  options: {
    sendFails?: Error;
    reservation?: Reservation;
    /** While `down` is true, PostgreSQL cannot be reached for the keys. */
    store?: { down: boolean };
  } = {},
) {
  const sends: ProducedRecord[][] = [];
  const producer = {
    publishAll: async (_topic: string, records: ProducedRecord[]) => {
      sends.push(records);
      if (options.sendFails) throw options.sendFails;
    },
  } as unknown as KafkaProducer;
  const reserved: string[] = [];
  const accepted: string[] = [];
  const released: string[] = [];
  const idempotency = {
    reserve: async ({ key }: { key: string }) => {
      if (options.store?.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      reserved.push(key);
      return options.reservation ?? { kind: 'reserved' };
    },
    markAccepted: async (_organizationId: string, key: string) => void accepted.push(key),
    release: async (_organizationId: string, key: string) => void released.push(key),
  } as unknown as IdempotencyRepository;
  // org_cold's catalog is not in the process yet (it must be read); a `broken.type` breaks it.
  const admission = (eventType: string) => {
    if (eventType === 'broken.type') throw new Error('schema check failed to run');
    return eventType === 'refused.type'
      ? { kind: 'refused', code: 'EVENT_TYPE_UNKNOWN', message: 'not declared', details: {} }
      : { kind: 'accepted' };
  };
  const catalogReads: string[] = [];
  const catalog = {
    admit: async (organizationId: string, eventType: string) => {
      catalogReads.push(organizationId);
      return admission(eventType);
    },
    admitKnown: (organizationId: string, eventType: string) =>
      organizationId === 'org_cold' ? undefined : admission(eventType),
  } as unknown as EventTypeCatalog;
  const applications = {
    resolve: async (_organizationId: string, reference: string) => {
      if (reference === 'missing') throw new DomainError('NOT_FOUND', 'no such application');
      return `app_${reference}`;
    },
  } as unknown as ApplicationLookup;
  const publish = new PublishEvent(
    producer,
    idempotency,
    catalog,
    topicNames('test'),
    loadConfig({}),
    applications,
  );
  return { publish, sends, reserved, accepted, released, catalogReads };
}

const input = (eventType: string, extra: Partial<PublishEventInput> = {}): PublishEventInput => ({
  eventType,
  payload: { n: 1 },
  ...extra,
});

const envelopes = (records: ProducedRecord[]): EventEnvelope[] =>
  records.map((record) => JSON.parse(String(record.value)) as EventEnvelope);

/** A key's record as PostgreSQL has it once its event (`evt_first`, type `keyed`) was accepted. */
const acceptedRecord = (fingerprint: string) => ({
  eventId: 'evt_first',
  eventType: 'keyed',
  fingerprint,
  payload: { n: 1 },
  endpointIds: null,
  channels: null,
  applicationId: null,
  createdAt: new Date('2026-01-01T00:00:00Z'),
  acceptedAt: new Date('2026-01-01T00:00:00Z'),
});

const codeOf = (outcome: PublishOutcome) =>
  outcome.kind === 'refused' ? (outcome.error as DomainError).code : 'published';

describe('PublishEvent.executeAll', () => {
  it("marks every record as ingest's, and adds no trace context while traces are not exported", async () => {
    const { publish, sends } = setUp();
    await publish.executeAll('org_1', [
      input('a'),
      input('b'),
      input('c', { idempotencyKey: 'key-c' }),
    ]);
    const records = sends.flat();
    expect(records).toHaveLength(3);
    for (const record of records) expect(record.headers).toEqual({ 'hookbase-origin': 'ingest' });
  });

  it('sends the events without a key to Kafka together, in order, one record each', async () => {
    const { publish, sends } = setUp();
    const outcomes = await publish.executeAll('org_1', [input('a'), input('b'), input('c')]);
    expect(sends).toHaveLength(1);
    const sent = envelopes(sends[0]);
    expect(sent.map((envelope) => envelope.eventType)).toEqual(['a', 'b', 'c']);
    expect(sends[0].every((record) => record.key === 'org_1')).toBe(true);
    expect(outcomes.map((outcome) => outcome.kind === 'published' && outcome.event.id)).toEqual(
      sent.map((envelope) => envelope.id),
    );
    expect(new Set(sent.map((envelope) => envelope.id)).size).toBe(3);
  });

  it("writes a payload's text as the edge read it, on both paths, and the others' payloads out", async () => {
    const { publish, sends } = setUp();
    const spaced = '{ "n" : 1 }';
    const read = (extra: Partial<PublishEventInput>): ReadEventInput => ({
      ...input('read', extra),
      [PAYLOAD_JSON]: spaced,
    });
    await publish.executeAll('org_1', [read({}), input('parsed'), read({ idempotencyKey: 'k' })]);
    const values = sends.flat().map((record) => String(record.value));
    expect(values).toHaveLength(3);
    expect(values.filter((value) => value.includes(spaced))).toHaveLength(2);
    expect(values.find((value) => value.includes('"parsed"'))).toContain('"payload":{"n":1}');
    expect(envelopes(sends.flat()).map((envelope) => envelope.payload)).toEqual([
      { n: 1 },
      { n: 1 },
      { n: 1 },
    ]);
  });

  it('refuses an event on its own: the others of the batch are still sent', async () => {
    const { publish, sends } = setUp();
    const outcomes = await publish.executeAll('org_1', [
      input('a'),
      input('refused.type'),
      input('b', { applicationId: 'missing' }),
      input('c', { applicationId: 'shop' }),
    ]);
    expect(outcomes.map(codeOf)).toEqual([
      'published',
      'EVENT_TYPE_UNKNOWN',
      'NOT_FOUND',
      'published',
    ]);
    expect(
      envelopes(sends[0]).map((envelope) => [envelope.eventType, envelope.applicationId]),
    ).toEqual([
      ['a', undefined],
      ['c', 'app_shop'],
    ]);
  });

  it("admits events at once when the organization's catalog is here, and waits for it otherwise", async () => {
    const { publish, sends, catalogReads } = setUp();
    const known = await publish.executeAll('org_1', [input('a'), input('refused.type')]);
    expect(known.map(codeOf)).toEqual(['published', 'EVENT_TYPE_UNKNOWN']);
    // An event naming an application resolves it, so it takes the path that waits.
    await publish.executeAll('org_1', [input('b', { applicationId: 'shop' })]);
    expect(catalogReads).toEqual(['org_1']);
    const cold = await publish.executeAll('org_cold', [input('c'), input('refused.type')]);
    expect(cold.map(codeOf)).toEqual(['published', 'EVENT_TYPE_UNKNOWN']);
    expect(catalogReads).toEqual(['org_1', 'org_cold', 'org_cold']);
    expect(sends.flatMap((records) => envelopes(records).map((e) => e.eventType))).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('refuses an event whose admission fails to run as SERVICE_UNAVAILABLE, on both paths, and sends the rest', async () => {
    for (const organizationId of ['org_1', 'org_cold']) {
      const { publish, sends } = setUp();
      const outcomes = await publish.executeAll(organizationId, [input('broken.type'), input('a')]);
      expect(outcomes.map(codeOf)).toEqual(['SERVICE_UNAVAILABLE', 'published']);
      expect(envelopes(sends[0]).map((envelope) => envelope.eventType)).toEqual(['a']);
    }
  });

  it('gives each event an envelope with only the fields it has', async () => {
    const { publish, sends } = setUp();
    await publish.executeAll('org_1', [
      input('a'),
      input('b', { endpointIds: ['ep_1'], channels: ['eu'] }),
    ]);
    const [plain, targeted] = envelopes(sends[0]);
    expect(Object.keys(plain).sort()).toEqual([
      'acceptedAt',
      'eventType',
      'id',
      'organizationId',
      'payload',
    ]);
    expect(targeted).toMatchObject({ endpointIds: ['ep_1'], channels: ['eu'] });
    expect(plain.id).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(new Date(plain.acceptedAt).toISOString()).toBe(plain.acceptedAt);
  });

  it('refuses every event of a send Kafka did not acknowledge, as SERVICE_UNAVAILABLE', async () => {
    const { publish } = setUp({ sendFails: new Error('broker gone') });
    const outcomes = await publish.executeAll('org_1', [input('a'), input('b')]);
    expect(outcomes.map(codeOf)).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
  });

  it('says that a timed-out event may be stored, so that a retry keeps its key', async () => {
    const { publish } = setUp({ sendFails: new PublishTimeoutError(5) });
    const [outcome] = await publish.executeAll('org_1', [input('a')]);
    expect(outcome.kind === 'refused' && (outcome.error as DomainError).details).toMatchObject({
      stored: 'unknown',
    });
  });

  it('reserves the key of a keyed event, then sends the batch in one publish, in the order given', async () => {
    const { publish, sends, reserved, accepted } = setUp();
    const outcomes = await publish.executeAll('org_1', [
      input('a'),
      input('keyed', { idempotencyKey: 'k1' }),
      input('b'),
    ]);
    expect(outcomes.map(codeOf)).toEqual(['published', 'published', 'published']);
    expect(reserved).toEqual(['k1']);
    expect(accepted).toEqual(['k1']);
    const sent = sends.map((records) => envelopes(records).map((envelope) => envelope.eventType));
    expect(sent).toEqual([['a', 'keyed', 'b']]);
  });

  it('frees the keys of a batch Kafka refused, so that a repeat can send them', async () => {
    const { publish, accepted, released } = setUp({ sendFails: new Error('broker gone') });
    const outcomes = await publish.executeAll('org_1', [
      input('a'),
      input('keyed', { idempotencyKey: 'k1' }),
    ]);
    expect(outcomes.map(codeOf)).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
    expect(released).toEqual(['k1']);
    expect(accepted).toEqual([]);
  });

  it('answers a repeated key with the first event, sending nothing new when it was accepted', async () => {
    const { publish, sends } = setUp({
      reservation: { kind: 'existing', record: acceptedRecord('another') },
    });
    const [conflict] = await publish.executeAll('org_1', [
      input('keyed', { idempotencyKey: 'k1' }),
    ]);
    expect(codeOf(conflict)).toBe('IDEMPOTENCY_CONFLICT');
    expect(sends).toHaveLength(0);
  });

  it('answers a repeat of a key it accepted while PostgreSQL is out of reach, and refuses what it cannot check', async () => {
    const store = { down: false };
    const { publish, sends } = setUp({ store });
    const first = await publish.execute('org_1', input('keyed', { idempotencyKey: 'k1' }));
    expect(sends).toHaveLength(1);

    store.down = true;
    // The same event again: the first one, without a send.
    expect(await publish.execute('org_1', input('keyed', { idempotencyKey: 'k1' }))).toEqual({
      ...first,
      duplicate: true,
    });
    expect(sends).toHaveLength(1);
    // Another payload under the key: a conflict, as with the store up.
    await expect(
      publish.execute('org_1', input('keyed', { idempotencyKey: 'k1', payload: { n: 2 } })),
    ).rejects.toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', details: { eventId: first.id } });
    // A key it never saw, or another organization's: not now.
    for (const [organizationId, key] of [
      ['org_1', 'k2'],
      ['org_2', 'k1'],
    ]) {
      await expect(
        publish.execute(organizationId, input('keyed', { idempotencyKey: key })),
      ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    }
    expect(sends).toHaveLength(1);
  });

  it('remembers a key found accepted in PostgreSQL, for a repeat while it is out of reach', async () => {
    const store = { down: false };
    const record = acceptedRecord(eventFingerprint('keyed', { n: 1 }, undefined));
    const { publish, sends } = setUp({ store, reservation: { kind: 'existing', record } });
    const repeat = { id: 'evt_first', eventType: 'keyed', duplicate: true };
    expect(await publish.execute('org_1', input('keyed', { idempotencyKey: 'k1' }))).toMatchObject(
      repeat,
    );
    store.down = true;
    expect(await publish.execute('org_1', input('keyed', { idempotencyKey: 'k1' }))).toEqual({
      ...repeat,
      acceptedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(sends).toHaveLength(0);
  });

  it('execute publishes one event, and throws the error that refused it', async () => {
    const { publish, sends } = setUp();
    const event = await publish.execute('org_1', input('a'));
    expect(event).toMatchObject({ eventType: 'a', duplicate: false });
    expect(envelopes(sends[0])[0].id).toBe(event.id);
    await expect(publish.execute('org_1', input('refused.type'))).rejects.toMatchObject({
      code: 'EVENT_TYPE_UNKNOWN',
    });
  });
});
