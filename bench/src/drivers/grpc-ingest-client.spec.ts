import { Metadata, status } from '@grpc/grpc-js';
import { grpcBatchOutcomes, grpcErrorOutcome, toPublishRequest } from './grpc-ingest-client';

function grpcError(code: status, hookbaseCode?: string) {
  const metadata = new Metadata();
  if (hookbaseCode) metadata.set('hookbase-error-code', hookbaseCode);
  return { code, metadata };
}

describe('toPublishRequest', () => {
  it('sends the payload as JSON text under the .proto field names', () => {
    expect(toPublishRequest({ eventType: 'order.created', payload: { s: 3, pad: 'xx' } })).toEqual({
      event_type: 'order.created',
      payload_json: '{"s":3,"pad":"xx"}',
    });
  });
});

describe('grpcErrorOutcome', () => {
  it('counts a status the server chose as a refusal, with its Hookbase code', () => {
    expect(grpcErrorOutcome(grpcError(status.INVALID_ARGUMENT, 'VALIDATION_FAILED'))).toEqual({
      kind: 'refused',
      detail: 'gRPC INVALID_ARGUMENT VALIDATION_FAILED',
    });
    expect(grpcErrorOutcome(grpcError(status.UNAVAILABLE, 'SERVICE_UNAVAILABLE')).kind).toBe(
      'refused',
    );
    // Too large for the server's gRPC layer: refused before Hookbase saw it, no code.
    expect(grpcErrorOutcome(grpcError(status.RESOURCE_EXHAUSTED))).toEqual({
      kind: 'refused',
      detail: 'gRPC RESOURCE_EXHAUSTED',
    });
  });

  it('counts a transport failure as failed: the events may or may not be stored', () => {
    expect(grpcErrorOutcome(grpcError(status.DEADLINE_EXCEEDED))).toEqual({
      kind: 'failed',
      detail: 'gRPC DEADLINE_EXCEEDED',
    });
    expect(grpcErrorOutcome(grpcError(status.UNAVAILABLE)).kind).toBe('failed');
  });
});

describe('grpcBatchOutcomes', () => {
  it('reads one result per event, in order', () => {
    expect(
      grpcBatchOutcomes(
        [
          { result: 'event', event: { id: 'evt_a' } },
          { result: 'error', error: { code: 'INVALID_JSON', message: 'payload_json' } },
        ],
        2,
      ),
    ).toEqual([
      { kind: 'accepted', eventId: 'evt_a' },
      { kind: 'refused', detail: 'gRPC result INVALID_JSON' },
    ]);
  });

  it('fails every event when the answer does not cover each one', () => {
    expect(grpcBatchOutcomes(undefined, 2).map((o) => o.kind)).toEqual(['failed', 'failed']);
    expect(grpcBatchOutcomes([{ result: 'event', event: { id: 'evt_a' } }], 3)).toHaveLength(3);
    expect(grpcBatchOutcomes([{}], 1)[0].kind).toBe('failed');
  });
});
