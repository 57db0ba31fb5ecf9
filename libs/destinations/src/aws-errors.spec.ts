import {
  AWS_PERMANENT_CODES,
  AWS_RETRYABLE_CODES,
  awsErrorCode,
  classifyAwsError,
} from './aws-errors';

/** An error shaped like the SDK's ServiceException subclasses. */
function serviceError(
  name: string,
  status: number | undefined,
  extra: Record<string, unknown> = {},
): Error {
  const error = new Error('it happened') as Error & Record<string, unknown>;
  error.name = name;
  error.$fault = status !== undefined && status >= 500 ? 'server' : 'client';
  error.$metadata = { httpStatusCode: status, attempts: 1, totalRetryDelay: 0 };
  return Object.assign(error, extra);
}

/** An error shaped like the SDK's transport errors (no status: the service never answered). */
function transportError(code: string, message = `connect ${code} 127.0.0.1:1`): Error {
  const error = new Error(message) as Error & Record<string, unknown>;
  error.code = code;
  error.$metadata = { attempts: 1, totalRetryDelay: 0 };
  return error;
}

describe('classifyAwsError', () => {
  it('keeps the two code tables apart', () => {
    const both = [...AWS_RETRYABLE_CODES].filter((code) => AWS_PERMANENT_CODES.has(code));
    expect(both).toEqual([]);
  });

  it.each([...AWS_RETRYABLE_CODES])('retries %s whatever its status says', (code) => {
    for (const status of [400, 429, 500, 503, undefined]) {
      const outcome = classifyAwsError(serviceError(code, status));
      expect(outcome.kind).toBe('retry');
      expect(outcome.error).toBe(`${code}: it happened`);
      expect(outcome.status).toBe(status);
    }
  });

  it.each([...AWS_PERMANENT_CODES])('fails %s for good whatever its status says', (code) => {
    for (const status of [400, 403, 404, 500, undefined]) {
      const outcome = classifyAwsError(serviceError(code, status));
      expect(outcome.kind).toBe('failed');
      expect(outcome.status).toBe(status);
    }
  });

  it('reads the query-compatible wire code when the modelled name is unknown', () => {
    // SQS over its JSON protocol: name QueueDoesNotExist, Code the legacy wire code.
    const error = serviceError('SomethingNew', 400, {
      Code: 'AWS.SimpleQueueService.NonExistentQueue',
    });
    expect(awsErrorCode(error)).toBe('AWS.SimpleQueueService.NonExistentQueue');
    expect(classifyAwsError(error)).toMatchObject({ kind: 'failed', status: 400 });
  });

  it('reports what moto and AWS send for the common cases', () => {
    expect(
      classifyAwsError(
        serviceError('QueueDoesNotExist', 400, {
          Code: 'AWS.SimpleQueueService.NonExistentQueue',
          message: 'The specified queue does not exist.',
        }),
      ),
    ).toEqual({
      kind: 'failed',
      status: 400,
      error: 'AWS.SimpleQueueService.NonExistentQueue: The specified queue does not exist.',
    });
    expect(classifyAwsError(serviceError('NoSuchBucket', 404))).toEqual({
      kind: 'failed',
      status: 404,
      error: 'NoSuchBucket: it happened',
    });
    expect(classifyAwsError(serviceError('ThrottlingException', 400))).toEqual({
      kind: 'retry',
      status: 400,
      error: 'ThrottlingException: it happened',
    });
  });

  it.each([
    ['ECONNREFUSED'],
    ['ECONNRESET'],
    ['EPIPE'],
    ['ENOTFOUND'],
    ['EAI_AGAIN'],
    ['EHOSTUNREACH'],
    ['ENETUNREACH'],
  ])('retries a connection that failed with %s as a network error', (code) => {
    expect(classifyAwsError(transportError(code))).toEqual({
      kind: 'retry',
      error: `network: connect ${code} 127.0.0.1:1`,
    });
  });

  it("reads the code from the text of the SDK's wrapper of a foreign error", () => {
    const wrapped = new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED 127.0.0.1:9');
    expect(classifyAwsError(wrapped)).toEqual({
      kind: 'retry',
      error: 'network: connect ECONNREFUSED 127.0.0.1:9',
    });
    const late = new Error('AWS SDK error wrapper for Error: read ETIMEDOUT');
    expect(classifyAwsError(late)).toEqual({ kind: 'retry', error: 'timeout' });
  });

  it('names the code when the message does not', () => {
    expect(classifyAwsError(transportError('ECONNRESET', 'socket hang up'))).toEqual({
      kind: 'retry',
      error: 'network: ECONNRESET socket hang up',
    });
  });

  it.each([
    ['the SDK request timeout', Object.assign(new Error('timed out'), { name: 'TimeoutError' })],
    ['an aborted send', Object.assign(new Error('aborted'), { name: 'AbortError' })],
    ['a socket timeout', transportError('ETIMEDOUT')],
    [
      'a connect timeout in a cause',
      { message: 'fetch failed', cause: { code: 'UND_ERR_CONNECT_TIMEOUT' } },
    ],
  ])('retries %s as a timeout', (_label, error) => {
    expect(classifyAwsError(error)).toEqual({ kind: 'retry', error: 'timeout' });
  });

  it.each([500, 502, 503, 504, 599, 408, 425, 429])(
    'retries an unknown error with status %i',
    (status) => {
      expect(classifyAwsError(serviceError('Unheard', status))).toMatchObject({
        kind: 'retry',
        status,
      });
    },
  );

  it.each([300, 301, 307, 400, 401, 403, 404, 409, 413, 422])(
    'fails an unknown error with status %i for good',
    (status) => {
      expect(classifyAwsError(serviceError('Unheard', status))).toMatchObject({
        kind: 'failed',
        status,
      });
    },
  );

  it("follows the SDK's retryable mark over a 4xx status", () => {
    const error = serviceError('Unheard', 400, { $retryable: { throttling: true } });
    expect(classifyAwsError(error)).toMatchObject({ kind: 'retry', status: 400 });
  });

  it('uses the fault side when there is no status', () => {
    const server = serviceError('Unheard', undefined, { $fault: 'server' });
    const client = serviceError('Unheard', undefined, { $fault: 'client' });
    expect(classifyAwsError(server).kind).toBe('retry');
    expect(classifyAwsError(client).kind).toBe('failed');
  });

  it('fails for good, without retrying, a target the address policy refused at connect time', () => {
    const text =
      'sqs.tenant.example resolves to a private, loopback or link-local address (HOOKBASE_ALLOW_PRIVATE_TARGETS is off)';
    // As the guarded lookup hands it to the SDK, and as the SDK may keep only its text.
    expect(classifyAwsError(transportError('URL_NOT_ALLOWED', text))).toEqual({
      kind: 'failed',
      error: text,
    });
    expect(classifyAwsError(new Error(`AWS SDK error wrapper for Error: ${text}`))).toEqual({
      kind: 'failed',
      error: text,
    });
    const wrapped = Object.assign(new Error('socket hang up'), {
      cause: transportError('URL_NOT_ALLOWED', text),
    });
    expect(classifyAwsError(wrapped)).toMatchObject({ kind: 'failed' });
  });

  it('fails for good when no credentials can be found', () => {
    const error = Object.assign(new Error('Could not load credentials from any providers'), {
      name: 'CredentialsProviderError',
    });
    expect(classifyAwsError(error)).toMatchObject({ kind: 'failed' });
  });

  it.each([
    ['a plain Error', new Error('something odd'), 'something odd'],
    ['a string', 'odd', 'odd'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['an empty object', {}, '[object Object]'],
  ])('retries what it cannot place: %s', (_label, error, text) => {
    expect(classifyAwsError(error)).toEqual({ kind: 'retry', error: text });
  });

  it('keeps error texts on one bounded line', () => {
    const error = serviceError('Unheard', 500, {
      message: `line one\nline two ${'x'.repeat(2000)}`,
    });
    const outcome = classifyAwsError(error);
    expect(outcome.error).not.toContain('\n');
    expect(outcome.error.length).toBeLessThanOrEqual(500);
    expect(outcome.error.startsWith('Unheard: line one line two')).toBe(true);
  });
});
