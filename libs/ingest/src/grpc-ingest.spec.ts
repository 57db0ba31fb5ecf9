import { status as GrpcStatus } from '@grpc/grpc-js';
import { existsSync } from 'node:fs';
import { DomainError } from '@hookbase/domain';
import { grpcStatusFor, toGrpcError } from './grpc-errors';
import { grpcEventBytes, ingestProtoPath, peerAddress, toInput } from './grpc-ingest.server';
import { PAYLOAD_JSON } from './publish-event.use-case';

const request = (fields: Partial<Parameters<typeof toInput>[0]> = {}) => ({
  event_type: 'order.created',
  payload_json: '{"id":1}',
  idempotency_key: '',
  endpoint_ids: [],
  application_id: '',
  ...fields,
});

const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return (error as DomainError).code;
  }
  throw new Error('expected a DomainError');
};

describe('gRPC ingest', () => {
  it('reads a request as the REST input, empty optional fields left out', () => {
    const text = { [PAYLOAD_JSON]: '{"id":1}' };
    expect(toInput(request())).toEqual({ eventType: 'order.created', payload: { id: 1 }, ...text });
    const endpointId = `ep_${'0'.repeat(26)}`;
    expect(toInput(request({ idempotency_key: 'k1', endpoint_ids: [endpointId] }))).toEqual({
      eventType: 'order.created',
      payload: { id: 1 },
      idempotencyKey: 'k1',
      endpointIds: [endpointId],
      ...text,
    });
    expect(toInput(request({ application_id: 'customer-42' }))).toEqual({
      eventType: 'order.created',
      payload: { id: 1 },
      applicationId: 'customer-42',
      ...text,
    });
  });

  it('keeps payload_json as sent beside the payload parsed from it, for the record', () => {
    const sent = ' {\n  "id" : 1, "name": "\\u00e9" }\n';
    const input = toInput(request({ payload_json: sent }));
    expect(input.payload).toEqual({ id: 1, name: 'é' });
    expect((input as { [PAYLOAD_JSON]?: string })[PAYLOAD_JSON]).toBe(sent);
  });

  it('refuses payload_json that is not JSON as INVALID_JSON, and a non-object as invalid', () => {
    expect(codeOf(() => toInput(request({ payload_json: '{nope' })))).toBe('INVALID_JSON');
    expect(codeOf(() => toInput(request({ payload_json: '' })))).toBe('INVALID_JSON');
    expect(codeOf(() => toInput(request({ payload_json: '[1]' })))).toBe('VALIDATION_FAILED');
  });

  it('names the .proto fields in validation messages', () => {
    expect(() => toInput(request({ event_type: '', payload_json: '7' }))).toThrow(
      /event_type: .*payload_json: /,
    );
  });

  it('maps error codes to gRPC statuses with the code in trailing metadata', () => {
    expect(grpcStatusFor('VALIDATION_FAILED')).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(grpcStatusFor('INVALID_JSON')).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(grpcStatusFor('UNAUTHORIZED')).toBe(GrpcStatus.UNAUTHENTICATED);
    expect(grpcStatusFor('IDEMPOTENCY_CONFLICT')).toBe(GrpcStatus.ALREADY_EXISTS);
    expect(grpcStatusFor('PAYLOAD_TOO_LARGE')).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(grpcStatusFor('SERVICE_UNAVAILABLE')).toBe(GrpcStatus.UNAVAILABLE);

    const conflict = toGrpcError(
      new DomainError('IDEMPOTENCY_CONFLICT', 'used — elsewhere', { eventId: 'evt_1', n: 'é' }),
    );
    expect(conflict.status.code).toBe(GrpcStatus.ALREADY_EXISTS);
    expect(conflict.status.details).toBe('used — elsewhere');
    expect(conflict.status.metadata?.get('hookbase-error-code')).toEqual(['IDEMPOTENCY_CONFLICT']);
    expect(JSON.parse(String(conflict.status.metadata?.get('hookbase-error-details')[0]))).toEqual({
      eventId: 'evt_1',
      n: 'é',
    });

    const unavailable = toGrpcError({ name: 'QueryFailedError', driverError: { code: '57P01' } });
    expect(unavailable).toMatchObject({ unexpected: false, code: 'SERVICE_UNAVAILABLE' });
    expect(unavailable.status.code).toBe(GrpcStatus.UNAVAILABLE);
    // As HTTP's 503, with a second to wait; other codes say nothing of when to try again.
    expect(unavailable.status.metadata?.get('retry-after')).toEqual(['1']);
    expect(conflict.status.metadata?.get('retry-after')).toEqual([]);

    const unexpected = toGrpcError(new Error('secret detail'));
    expect(unexpected).toMatchObject({ unexpected: true, code: 'INTERNAL' });
    expect(unexpected.status.code).toBe(GrpcStatus.INTERNAL);
    expect(unexpected.status.details).not.toContain('secret');
    expect(unexpected.status.metadata?.get('hookbase-error-details')).toEqual([]);
  });

  it("counts an event of a call by its text fields' length", () => {
    expect(grpcEventBytes(undefined)).toBe(0);
    expect(grpcEventBytes({})).toBe(0);
    expect(
      grpcEventBytes({
        event_type: 'order.created',
        payload_json: '{"id":1}',
        idempotency_key: 'k-1',
        application_id: '',
        endpoint_ids: ['ep_a', 'ep_bb'],
        channels: ['eu'],
      }),
    ).toBe(13 + 8 + 3 + 0 + 4 + 5 + 2);
  });

  it('finds the .proto from the source folder', () => {
    expect(existsSync(ingestProtoPath())).toBe(true);
  });
});

describe('peerAddress', () => {
  it.each([
    ['ipv4:127.0.0.1:50123', '127.0.0.1'],
    ['ipv6:[::1]:50123', '::1'],
    ['ipv6:[2001:db8::7]:1', '2001:db8::7'],
    ['unix:/tmp/socket', 'unix:/tmp/socket'],
  ])('%s is %s', (peer, address) => {
    expect(peerAddress(peer)).toBe(address);
  });
});
