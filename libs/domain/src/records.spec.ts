import { newId } from './ids';
import { DeliveryRecord, EventEnvelope } from './model';
import {
  deliveryRecordSchema,
  deliveryRecordValue,
  dlqRecordSchema,
  eventEnvelopeParser,
  eventEnvelopeSchema,
  eventEnvelopeValue,
  parseRecord,
  payloadTravelsInline,
} from './records';

const delivery = (): DeliveryRecord => ({
  messageId: newId('msg'),
  eventId: newId('evt'),
  organizationId: newId('org'),
  endpointId: newId('ep'),
  eventType: 'order.created',
  payload: { id: 1 },
  acceptedAt: new Date().toISOString(),
});

describe('parseRecord', () => {
  it('accepts a well-formed delivery record', () => {
    const record = delivery();
    expect(parseRecord(deliveryRecordSchema, Buffer.from(JSON.stringify(record)))).toEqual({
      ok: true,
      record,
    });
  });

  it.each([
    [null, 'empty record'],
    [Buffer.from('{'), 'not JSON'],
    [Buffer.from('[]'), '(record)'],
    [Buffer.from(JSON.stringify({ ...delivery(), messageId: null })), 'messageId'],
    [Buffer.from(JSON.stringify({ ...delivery(), payload: [] })), 'payload'],
  ])('passes over %s with a reason', (value, reason) => {
    const result = parseRecord(deliveryRecordSchema, value);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain(reason);
  });

  it('checks DLQ records, reason included', () => {
    const record = {
      messageId: newId('msg'),
      organizationId: newId('org'),
      endpointId: newId('ep'),
      eventId: newId('evt'),
      eventType: 'a',
      reason: 'max_attempts',
      attempts: 5,
      lastError: 'HTTP 503',
      lastResponseStatus: 503,
      deadLetteredAt: new Date().toISOString(),
    };
    expect(parseRecord(dlqRecordSchema, Buffer.from(JSON.stringify(record))).ok).toBe(true);
    const bad = { ...record, reason: 'bored', organizationId: null };
    const result = parseRecord(dlqRecordSchema, Buffer.from(JSON.stringify(bad)));
    expect(!result.ok && result.reason).toMatch(/reason.*organizationId|organizationId.*reason/s);
  });
});

describe('eventEnvelopeSchema', () => {
  const envelope = () => ({
    id: newId('evt'),
    organizationId: newId('org'),
    eventType: 'order.created',
    payload: { id: 1 },
    acceptedAt: new Date().toISOString(),
  });

  it('accepts what ingest writes', () => {
    const value = envelope();
    expect(parseRecord(eventEnvelopeSchema, Buffer.from(JSON.stringify(value)))).toEqual({
      ok: true,
      record: value,
    });
  });

  it.each([
    [{ id: 'x' }, 'id'],
    [{ payload: 3 }, 'payload'],
    [{ acceptedAt: 'yesterday' }, 'acceptedAt'],
    [{ eventType: '' }, 'eventType'],
  ])('refuses %j', (change, path) => {
    const result = parseRecord(
      eventEnvelopeSchema,
      Buffer.from(JSON.stringify({ ...envelope(), ...change })),
    );
    expect(!result.ok && result.reason).toContain(path);
  });
});

describe('deliveryRecordValue', () => {
  const valueOf = (record: DeliveryRecord) => {
    const { payload, ...rest } = record;
    return deliveryRecordValue(rest, JSON.stringify(payload));
  };

  it.each([
    ['a small payload', { id: 1 }],
    ['an empty payload', {}],
    [
      'nested values of every JSON kind',
      { a: [1, 'two', null, true, { b: 2.5 }], c: { d: { e: -1e-7 } }, f: false },
    ],
    ['text to escape', { 'quote"d': 'back\\slash', line: 'a\nb', tab: '\t', uni: 'é \u2028 😀' }],
  ])('writes the same text as JSON.stringify of the record, with %s', (_name, payload) => {
    const record: DeliveryRecord = { ...delivery(), payload };
    expect(valueOf(record)).toBe(JSON.stringify(record));
  });

  it('escapes the other fields as JSON.stringify does', () => {
    const record = { ...delivery(), eventType: 'type "quoted" \\ with\nnewline' };
    expect(valueOf(record)).toBe(JSON.stringify(record));
  });

  it('reads back as the record through the delivery record schema', () => {
    const record = delivery();
    expect(parseRecord(deliveryRecordSchema, Buffer.from(valueOf(record)))).toEqual({
      ok: true,
      record,
    });
  });

  it('writes a record without its payload, which reads back without one', () => {
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the payload stays out
    const { payload, ...rest } = delivery();
    const value = deliveryRecordValue(rest, undefined);
    expect(value).toBe(JSON.stringify(rest));
    const parsed = parseRecord(deliveryRecordSchema, Buffer.from(value));
    expect(parsed).toEqual({ ok: true, record: rest });
    expect(parsed.ok && 'payload' in parsed.record).toBe(false);
  });
});

describe('payloadTravelsInline', () => {
  /** A payload's JSON of exactly `bytes` bytes of UTF-8: `unit` repeated inside {"t":"…"}. */
  const ofBytes = (bytes: number, unit: string) => {
    const frame = Buffer.byteLength(JSON.stringify({ t: '' }));
    const text = JSON.stringify({ t: unit.repeat((bytes - frame) / Buffer.byteLength(unit)) });
    expect(Buffer.byteLength(text)).toBe(bytes);
    return text;
  };

  it.each([
    ['one-byte', 'a'],
    ['two-byte', 'é'],
    ['three-byte', '€'],
    ['four-byte (a surrogate pair)', '😀'],
  ])('goes inline up to the limit in bytes of UTF-8, with %s characters', (_name, unit) => {
    const unitBytes = Buffer.byteLength(unit);
    const at = 8 + 12 * unitBytes; // the frame {"t":""} is 8 bytes
    expect(payloadTravelsInline(ofBytes(at, unit), at)).toBe(true);
    expect(payloadTravelsInline(ofBytes(at, unit), at + 1)).toBe(true);
    expect(payloadTravelsInline(ofBytes(at, unit), at - 1)).toBe(false);
    expect(payloadTravelsInline(ofBytes(at + unitBytes, unit), at)).toBe(false);
  });

  it('sends every payload by reference with a limit of 0', () => {
    expect(payloadTravelsInline('{}', 0)).toBe(false);
    expect(payloadTravelsInline('{}', 1)).toBe(false);
    expect(payloadTravelsInline('{}', 2)).toBe(true);
  });
});

describe('eventEnvelopeValue', () => {
  const full = (): EventEnvelope => ({
    id: newId('evt'),
    organizationId: newId('org'),
    eventType: 'order.created',
    payload: { id: 1 },
    acceptedAt: new Date().toISOString(),
    idempotencyKey: 'key "1" \\ 2',
    endpointIds: [newId('ep')],
    channels: ['eu'],
    applicationId: newId('app'),
  });

  it('is JSON.stringify of the envelope without a payload text', () => {
    const envelope = full();
    expect(eventEnvelopeValue(envelope)).toBe(JSON.stringify(envelope));
  });

  it.each([
    ['as JSON.stringify writes it', (payload: object) => JSON.stringify(payload)],
    ['spaced and indented', (payload: object) => ` ${JSON.stringify(payload, null, 2)}\n`],
    ['with escapes for plain letters', () => '{"\\u0061":"\\u00e9\\n","b":[1.50,2e2,{"c":null}]}'],
  ])('reads back as the envelope, fields and payload, with the payload text %s', (_how, text) => {
    const payload = { a: 'é\n', b: [1.5, 200, { c: null }] };
    const envelope: EventEnvelope = { ...full(), payload };
    const value = eventEnvelopeValue(envelope, text(payload));
    expect(JSON.parse(value)).toEqual(envelope);
    expect(parseRecord(eventEnvelopeParser, Buffer.from(value))).toEqual({
      ok: true,
      record: envelope,
    });
  });

  it('leaves out the fields an envelope does not have, as JSON.stringify does', () => {
    const { id, organizationId, eventType, acceptedAt } = full();
    const envelope: EventEnvelope = { id, organizationId, eventType, acceptedAt, payload: {} };
    expect(JSON.parse(eventEnvelopeValue(envelope, '{}'))).toEqual(envelope);
    expect(Object.keys(JSON.parse(eventEnvelopeValue(envelope, '{}'))).sort()).toEqual(
      Object.keys(envelope).sort(),
    );
  });
});
