import { eventEnvelopeSchema } from '@hookbase/domain';
import { benchEnvelope } from './envelope';
import { rawBatch, rawProducerKind } from '../scenarios/ingest/bounds';

const ORG = 'org_01jz0000000000000000000000';

describe('benchEnvelope', () => {
  it('writes the documented envelope, keyed by organization id, carrying the sequence number', () => {
    const record = benchEnvelope(ORG, 42, 256, Date.parse('2026-11-30T12:00:00Z'));
    expect(record.key).toBe(ORG);
    const envelope = eventEnvelopeSchema.parse(JSON.parse(record.value));
    expect(envelope).toMatchObject({
      id: record.eventId,
      organizationId: ORG,
      eventType: 'bench.event',
      acceptedAt: '2026-11-30T12:00:00.000Z',
    });
    expect(envelope.payload.s).toBe(42);
    expect(JSON.stringify(envelope.payload).length).toBe(256);
  });

  it('gives every event an id of its own', () => {
    expect(benchEnvelope(ORG, 1, 0).eventId).not.toBe(benchEnvelope(ORG, 1, 0).eventId);
  });
});

describe('rawBatch', () => {
  it('is envelope-sized records, keys taken in turn', () => {
    const other = 'org_01jz0000000000000000000001';
    const batch = rawBatch([ORG, other], 256, 3);
    expect(batch.map((m) => m.key)).toEqual([ORG, other, ORG]);
    const sizes = batch.map((m) => Buffer.byteLength(m.value as string));
    expect(Math.min(...sizes)).toBeGreaterThan(256 + 100);
    expect(() => rawBatch([], 10, 1)).toThrow(/key/);
  });
});

describe('rawProducerKind', () => {
  it("is the client Hookbase's processes produce with: the default, or what --stack-env names", () => {
    expect(rawProducerKind({})).toBe('platformatic');
    expect(rawProducerKind({ HOOKBASE_KAFKA_PRODUCER: 'kafkajs' })).toBe('kafkajs');
    expect(rawProducerKind({ HOOKBASE_KAFKA_PRODUCER: 'platformatic', OTHER: 'x' })).toBe(
      'platformatic',
    );
  });
});
