import { z } from 'zod';
import { eventFieldTests, idPattern, OPTIONAL_EVENT_FIELDS, publishEventSchema } from './inputs';
import { isJsonObject, jsonObject } from './json-object';
import { DLQ_REASONS, DeliveryRecord, DlqRecord, EventEnvelope } from './model';
import { Parser, rememberedTextTest, textTest, withQuickPath } from './quick-parse';

/**
 * Schemas of the records services pass over Kafka. A consumer checks every record it reads: a
 * malformed one is reported and passed over, never allowed to stall its partition.
 */

const id = (prefix: string) => z.string().regex(idPattern(prefix));
const idTest = (prefix: string) => textTest(idPattern(prefix));
const instant = () => z.iso.datetime({ offset: true });

/** The envelope on `<prefix>.events`, as ingest writes it and as direct Kafka producers must. */
export const eventEnvelopeSchema = publishEventSchema.extend({
  id: id('evt'),
  organizationId: id('org'),
  acceptedAt: instant(),
}) satisfies z.ZodType<EventEnvelope>;

/** `eventEnvelopeSchema`, quick for the envelopes ingest writes (see withQuickPath). */
export const eventEnvelopeParser: Parser<EventEnvelope> = withQuickPath(
  eventEnvelopeSchema,
  {
    id: idTest('evt'),
    organizationId: idTest('org'),
    ...eventFieldTests,
    acceptedAt: rememberedTextTest(instant()),
  },
  OPTIONAL_EVENT_FIELDS,
);

export const deliveryRecordSchema = z.object({
  messageId: id('msg'),
  eventId: id('evt'),
  organizationId: id('org'),
  endpointId: id('ep'),
  eventType: z.string().min(1),
  payload: jsonObject().optional(),
  acceptedAt: instant(),
}) satisfies z.ZodType<DeliveryRecord>;

/** `deliveryRecordSchema`, quick for the records the fan-out writes (see withQuickPath). */
export const deliveryRecordParser: Parser<DeliveryRecord> = withQuickPath(
  deliveryRecordSchema,
  {
    messageId: idTest('msg'),
    eventId: idTest('evt'),
    organizationId: idTest('org'),
    endpointId: idTest('ep'),
    eventType: textTest(null, 1),
    payload: isJsonObject,
    acceptedAt: rememberedTextTest(instant()),
  },
  ['payload'],
);

/**
 * An event envelope's value. Given its payload as JSON text that was checked when it was read
 * (gRPC's `payload_json`), the text goes in as it is instead of the parsed payload being written
 * out again: the value parses to the same envelope, though its bytes may differ from
 * `JSON.stringify(envelope)` (spacing, escapes).
 */
export function eventEnvelopeValue(envelope: EventEnvelope, payloadJson?: string): string {
  if (payloadJson === undefined) return JSON.stringify(envelope);
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the payload goes in as received
  const { payload, ...rest } = envelope;
  return `${JSON.stringify(rest).slice(0, -1)},"payload":${payloadJson}}`;
}

/**
 * A delivery record's value, given its event's payload as JSON text, or undefined for a record
 * that goes without it (the dispatcher reads it from the event): the same text as
 * `JSON.stringify(record)`, with the payload written once per event instead of once per
 * recipient (an event fans out to as many records as it has endpoints).
 */
export function deliveryRecordValue(
  record: Omit<DeliveryRecord, 'payload'>,
  payloadJson: string | undefined,
): string {
  const text = JSON.stringify;
  const payload = payloadJson === undefined ? '' : `"payload":${payloadJson},`;
  return (
    `{"messageId":${text(record.messageId)},"eventId":${text(record.eventId)},` +
    `"organizationId":${text(record.organizationId)},"endpointId":${text(record.endpointId)},` +
    `"eventType":${text(record.eventType)},${payload}` +
    `"acceptedAt":${text(record.acceptedAt)}}`
  );
}

/**
 * Whether an event's payload goes in each of its delivery records, by the size of its JSON:
 * at most `inlineLimit` bytes, it does; a larger one is read by the dispatcher from the event,
 * once for all of the event's records it takes in together, instead of crossing Kafka once for
 * every recipient. `inlineLimit` 0 sends every payload by reference.
 */
export function payloadTravelsInline(payloadJson: string, inlineLimit: number): boolean {
  // A character is at most 3 bytes of UTF-8 (a surrogate pair, 2 characters, is 4 bytes):
  // the count of bytes is needed only when the text might be over the limit.
  if (payloadJson.length * 3 <= inlineLimit) return true;
  if (payloadJson.length > inlineLimit) return false;
  return Buffer.byteLength(payloadJson, 'utf8') <= inlineLimit;
}

export const dlqRecordSchema = z.object({
  messageId: id('msg'),
  organizationId: id('org'),
  endpointId: id('ep'),
  eventId: id('evt'),
  eventType: z.string().min(1),
  reason: z.enum(DLQ_REASONS),
  attempts: z.number().int().min(0),
  lastError: z.string().nullable(),
  lastResponseStatus: z.number().int().nullable(),
  deadLetteredAt: z.iso.datetime({ offset: true }),
}) satisfies z.ZodType<DlqRecord>;

export type RecordParse<T> = { ok: true; record: T } | { ok: false; reason: string };

export function parseRecord<T>(schema: Parser<T>, value: Buffer | null): RecordParse<T> {
  if (!value) return { ok: false, reason: 'empty record' };
  let json: unknown;
  try {
    json = JSON.parse(value.toString('utf8'));
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, record: result.data };
  return {
    ok: false,
    reason: result.error.issues
      .map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`)
      .join('; '),
  };
}
