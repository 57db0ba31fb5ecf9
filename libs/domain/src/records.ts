import { z } from 'zod';
import { publishEventSchema } from './inputs';
import { jsonObject } from './json-object';
import { DLQ_REASONS, DeliveryRecord, DlqRecord, EventEnvelope } from './model';

/**
 * Schemas of the records services pass over Kafka. A consumer checks every record it reads: a
 * malformed one is reported and passed over, never allowed to stall its partition.
 */

const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`));

/** The envelope on `<prefix>.events`, as ingest writes it and as direct Kafka producers must. */
export const eventEnvelopeSchema = publishEventSchema.extend({
  id: id('evt'),
  organizationId: id('org'),
  acceptedAt: z.iso.datetime({ offset: true }),
}) satisfies z.ZodType<EventEnvelope>;

export const deliveryRecordSchema = z.object({
  messageId: id('msg'),
  eventId: id('evt'),
  organizationId: id('org'),
  endpointId: id('ep'),
  eventType: z.string().min(1),
  payload: jsonObject(),
  acceptedAt: z.iso.datetime({ offset: true }),
}) satisfies z.ZodType<DeliveryRecord>;

/**
 * A delivery record's value, given its event's payload as JSON text: the same text as
 * `JSON.stringify(record)`, with the payload written once per event instead of once per
 * recipient (an event fans out to as many records as it has endpoints).
 */
export function deliveryRecordValue(
  record: Omit<DeliveryRecord, 'payload'>,
  payloadJson: string,
): string {
  const text = JSON.stringify;
  return (
    `{"messageId":${text(record.messageId)},"eventId":${text(record.eventId)},` +
    `"organizationId":${text(record.organizationId)},"endpointId":${text(record.endpointId)},` +
    `"eventType":${text(record.eventType)},"payload":${payloadJson},` +
    `"acceptedAt":${text(record.acceptedAt)}}`
  );
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

export function parseRecord<T>(schema: z.ZodType<T>, value: Buffer | null): RecordParse<T> {
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
