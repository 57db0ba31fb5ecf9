import { classifyGoogleError, GRPC_PERMANENT, GRPC_RETRYABLE, GRPC_STATUS } from './google-errors';

function grpcError(code: number, message = 'it happened'): Error {
  return Object.assign(new Error(`${code} ${message}`), { code, details: message });
}

describe('classifyGoogleError', () => {
  it('places every gRPC status except OK exactly once', () => {
    const all = Object.values(GRPC_STATUS).filter((code) => code !== GRPC_STATUS.OK);
    for (const code of all) {
      expect(Number(GRPC_RETRYABLE.has(code)) + Number(GRPC_PERMANENT.has(code))).toBe(1);
    }
  });

  it.each([
    ['CANCELLED', 1],
    ['UNKNOWN', 2],
    ['RESOURCE_EXHAUSTED', 8],
    ['ABORTED', 10],
    ['INTERNAL', 13],
    ['UNAVAILABLE', 14],
  ])('retries %s', (name, code) => {
    expect(classifyGoogleError(grpcError(code))).toEqual({
      kind: 'retry',
      error: `${name}: ${code} it happened`,
    });
  });

  it('retries DEADLINE_EXCEEDED as a timeout', () => {
    expect(classifyGoogleError(grpcError(4))).toEqual({ kind: 'retry', error: 'timeout' });
  });

  it.each([
    ['INVALID_ARGUMENT', 3],
    ['NOT_FOUND', 5],
    ['ALREADY_EXISTS', 6],
    ['PERMISSION_DENIED', 7],
    ['FAILED_PRECONDITION', 9],
    ['OUT_OF_RANGE', 11],
    ['UNIMPLEMENTED', 12],
    ['DATA_LOSS', 15],
    ['UNAUTHENTICATED', 16],
  ])('fails %s for good', (name, code) => {
    expect(classifyGoogleError(grpcError(code))).toEqual({
      kind: 'failed',
      error: `${name}: ${code} it happened`,
    });
  });

  it('does not repeat a status name the message already has', () => {
    const error = grpcError(5, 'NOT_FOUND: Topic not found');
    expect(classifyGoogleError(error)).toEqual({
      kind: 'failed',
      error: '5 NOT_FOUND: Topic not found',
    });
  });

  it("reads the publisher's PublishError (an ordering key's failure) by its code", () => {
    const error = Object.assign(
      new Error('Unable to publish for key "ep_1". Reason: 14 UNAVAILABLE: No connection'),
      { name: 'PublishError', code: 14 },
    );
    expect(classifyGoogleError(error)).toMatchObject({ kind: 'retry' });
  });

  it.each([
    [500, 'retry'],
    [503, 'retry'],
    [429, 'retry'],
    [408, 'retry'],
    [400, 'failed'],
    [401, 'failed'],
    [403, 'failed'],
    [404, 'failed'],
    [302, 'failed'],
  ])('classifies an HTTP %i (token endpoint, REST) as %s', (status, kind) => {
    const gaxios = Object.assign(new Error('request failed'), { response: { status } });
    expect(classifyGoogleError(gaxios)).toEqual({
      kind,
      status,
      error: `HTTP ${status}: request failed`,
    });
    const plain = Object.assign(new Error('request failed'), { status });
    expect(classifyGoogleError(plain)).toMatchObject({ kind, status });
  });

  it.each([['ECONNREFUSED'], ['ECONNRESET'], ['ENOTFOUND'], ['EAI_AGAIN']])(
    'retries a connection that failed with %s',
    (code) => {
      const error = Object.assign(new Error(`connect ${code}`), { code });
      expect(classifyGoogleError(error)).toEqual({
        kind: 'retry',
        error: `network: connect ${code}`,
      });
    },
  );

  it.each([
    ['our own deadline', Object.assign(new Error('late'), { name: 'TimeoutError' })],
    ['a socket timeout', Object.assign(new Error('late'), { code: 'ETIMEDOUT' })],
  ])('retries %s as a timeout', (_label, error) => {
    expect(classifyGoogleError(error)).toEqual({ kind: 'retry', error: 'timeout' });
  });

  it('fails for good when there are no credentials at all', () => {
    const error = new Error('Could not load the default credentials. Browse to https://...');
    expect(classifyGoogleError(error)).toMatchObject({ kind: 'failed' });
  });

  it.each([
    ['a plain Error', new Error('odd'), 'odd'],
    ['a string', 'odd', 'odd'],
    ['undefined', undefined, 'unknown error'],
    ['an unknown numeric code', Object.assign(new Error('odd'), { code: 99 }), 'odd'],
  ])('retries what it cannot place: %s', (_label, error, text) => {
    expect(classifyGoogleError(error)).toEqual({ kind: 'retry', error: text });
  });
});
