import { IHeaders } from 'kafkajs';

/**
 * Ingest marks the event records it writes with this header, so the fan-out can tell them from
 * records that direct producers wrote to the events topic themselves: ingest counts its events as
 * accepted when Kafka acknowledges them, the fan-out counts the others (surface `kafka`) when it
 * records them. A direct producer that sets it is simply not counted.
 */
export const INGEST_ORIGIN_HEADER = 'hookbase-origin';
const INGEST_ORIGIN = 'ingest';
const INGEST_ORIGIN_BYTES = Buffer.from(INGEST_ORIGIN);

/** The headers of an event record that ingest writes: its trace context, and where it came from. */
export function ingestRecordHeaders(
  trace: Record<string, string> | undefined,
): Record<string, string> {
  return { ...trace, [INGEST_ORIGIN_HEADER]: INGEST_ORIGIN };
}

/** Whether a consumed event record was written by ingest (not by a direct producer). */
export function writtenByIngest(headers: IHeaders | undefined): boolean {
  return originIs(headers, INGEST_ORIGIN, INGEST_ORIGIN_BYTES);
}

/**
 * Whether the record's origin header says `text`: compared as bytes when read back (the fan-out
 * asks it of every event), without making a string of them.
 */
function originIs(headers: IHeaders | undefined, text: string, bytes: Buffer): boolean {
  const value = headers?.[INGEST_ORIGIN_HEADER];
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return false;
  return typeof first === 'string' ? first === text : bytes.equals(first);
}

const OPERATIONAL_ORIGIN = 'operational';
const OPERATIONAL_ORIGIN_BYTES = Buffer.from(OPERATIONAL_ORIGIN);

/** The headers of an operational event, written by Hookbase itself (operational-events.ts). */
export function operationalRecordHeaders(): Record<string, string> {
  return { [INGEST_ORIGIN_HEADER]: OPERATIONAL_ORIGIN };
}

/**
 * Whether a consumed event record is an operational event Hookbase wrote: only those may reach
 * operational endpoints (ingest never writes this origin, so a publish through the API cannot).
 */
export function writtenAsOperational(headers: IHeaders | undefined): boolean {
  return originIs(headers, OPERATIONAL_ORIGIN, OPERATIONAL_ORIGIN_BYTES);
}
