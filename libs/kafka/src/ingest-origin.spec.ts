import {
  ingestRecordHeaders,
  INGEST_ORIGIN_HEADER,
  operationalRecordHeaders,
  writtenAsOperational,
  writtenByIngest,
} from './ingest-origin';

describe('ingest origin header', () => {
  it("marks ingest's records beside their trace context", () => {
    expect(ingestRecordHeaders(undefined)).toEqual({ [INGEST_ORIGIN_HEADER]: 'ingest' });
    expect(ingestRecordHeaders({ traceparent: '00-a-b-01' })).toEqual({
      traceparent: '00-a-b-01',
      [INGEST_ORIGIN_HEADER]: 'ingest',
    });
  });

  it('tells records written by ingest from those of direct producers, as read back', () => {
    expect(writtenByIngest({ [INGEST_ORIGIN_HEADER]: Buffer.from('ingest') })).toBe(true);
    expect(writtenByIngest({ [INGEST_ORIGIN_HEADER]: [Buffer.from('ingest')] })).toBe(true);
    expect(writtenByIngest(undefined)).toBe(false);
    expect(writtenByIngest({})).toBe(false);
    expect(writtenByIngest({ traceparent: Buffer.from('00-a-b-01') })).toBe(false);
    expect(writtenByIngest({ [INGEST_ORIGIN_HEADER]: Buffer.from('someone') })).toBe(false);
    expect(writtenByIngest({ [INGEST_ORIGIN_HEADER]: Buffer.from('ingested') })).toBe(false);
    expect(writtenByIngest({ [INGEST_ORIGIN_HEADER]: Buffer.from('inges') })).toBe(false);
    expect(writtenByIngest({ [INGEST_ORIGIN_HEADER]: 'ingest' })).toBe(true);
    expect(writtenByIngest({ [INGEST_ORIGIN_HEADER]: 'operational' })).toBe(false);
  });

  it('tells operational events from the rest, whichever form the header has', () => {
    const [name, value] = Object.entries(operationalRecordHeaders())[0];
    expect(writtenAsOperational({ [name]: Buffer.from(value) })).toBe(true);
    expect(writtenAsOperational({ [name]: [Buffer.from(value)] })).toBe(true);
    expect(writtenAsOperational({ [name]: value })).toBe(true);
    expect(writtenAsOperational({ [name]: Buffer.from('ingest') })).toBe(false);
    expect(writtenAsOperational({ [name]: Buffer.from(`${value}!`) })).toBe(false);
    expect(writtenAsOperational(undefined)).toBe(false);
    expect(writtenByIngest({ [name]: Buffer.from(value) })).toBe(false);
  });
});
