import { clientErrorResponse } from './http-app';

/** The raw answer split into its status line, headers (lower-cased names) and parsed body. */
function parse(raw: string) {
  const [head, body] = raw.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const at = line.indexOf(':');
      return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()];
    }),
  );
  return { statusLine, headers, body: JSON.parse(body) as unknown, rawBody: body };
}

describe('clientErrorResponse', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 'HTTP/1.1 431 Request Header Fields Too Large', 'HEADERS_TOO_LARGE'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 'HTTP/1.1 408 Request Timeout', 'REQUEST_TIMEOUT'],
    ['HPE_INVALID_METHOD', 'HTTP/1.1 400 Bad Request', 'VALIDATION_FAILED'],
    [undefined, 'HTTP/1.1 400 Bad Request', 'VALIDATION_FAILED'],
  ])('answers %s in the coded format', (errorCode, statusLine, code) => {
    const answer = parse(clientErrorResponse(errorCode));
    expect(answer.statusLine).toBe(statusLine);
    expect(answer.body).toEqual({ error: { code, message: expect.any(String) } });
    expect(answer.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(answer.rawBody)),
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      connection: 'close',
    });
  });
});
