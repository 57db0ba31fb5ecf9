import {
  authHostOf,
  checkAuthBinding,
  checkEndpointTimeout,
  headerIssues,
  headerNameRefusal,
  receiverAuthSchema,
  RESERVED_HEADER_NAMES,
} from './receiver-options';

describe('headerNameRefusal', () => {
  it.each(RESERVED_HEADER_NAMES.map((name) => [name]))('refuses the reserved name %s', (name) => {
    expect(headerNameRefusal(name, { hasAuth: false })).toMatch(/reserved/);
    expect(headerNameRefusal(name.toUpperCase(), { hasAuth: false })).toMatch(/reserved/);
  });

  it.each([['webhook-id'], ['Webhook-Signature'], ['hookbase-attempt'], ['HOOKBASE-anything']])(
    'refuses %s (a reserved prefix)',
    (name) => expect(headerNameRefusal(name, { hasAuth: false })).toMatch(/reserved/),
  );

  it.each([['bad name'], ['x:y'], [''], ['é'], ['a\nb']])('refuses %j (not a token)', (name) =>
    expect(headerNameRefusal(name, { hasAuth: false })).toMatch(/token/),
  );

  it('takes ordinary names, and Authorization only without auth', () => {
    for (const name of ['x-api-key', 'X-Tenant', 'user-agent', "x!#$%&'*+.^_`|~1"]) {
      expect(headerNameRefusal(name, { hasAuth: false })).toBeNull();
    }
    expect(headerNameRefusal('Authorization', { hasAuth: false })).toBeNull();
    expect(headerNameRefusal('Authorization', { hasAuth: true })).toMatch(/auth/);
  });
});

describe('headerIssues', () => {
  const none = { hasAuth: false, storedSensitive: new Set<string>() };

  it('names each bad header by its index', () => {
    expect(
      headerIssues(
        [
          { name: 'x-ok', value: 'v', sensitive: false },
          { name: 'content-type', value: 'v', sensitive: false },
          { name: 'X-OK', value: 'v', sensitive: false },
          { name: 'x-missing', sensitive: false },
        ],
        none,
      ).map((issue) => issue.path),
    ).toEqual(['headers.1.name', 'headers.2.name', 'headers.3.value']);
  });

  it('lets a stored sensitive header leave its value out, and nothing else', () => {
    const stored = { hasAuth: false, storedSensitive: new Set(['x-api-key']) };
    expect(headerIssues([{ name: 'X-Api-Key', sensitive: true }], stored)).toEqual([]);
    expect(headerIssues([{ name: 'x-api-key', sensitive: false }], stored)).toHaveLength(1);
    expect(headerIssues([{ name: 'x-other', sensitive: true }], stored)).toHaveLength(1);
  });
});

describe('auth bound to its host', () => {
  it('is the host with its port, lower-cased', () => {
    expect(authHostOf('https://Example.COM:8443/a?b')).toBe('example.com:8443');
    expect(authHostOf('https://example.com/a')).toBe('example.com');
  });

  it('allows another path on the same host, refuses another host or port', () => {
    expect(() => checkAuthBinding('example.com', 'https://example.com/other')).not.toThrow();
    for (const url of ['https://evil.example/a', 'https://example.com:444/a']) {
      expect(() => checkAuthBinding('example.com', url)).toThrow(
        expect.objectContaining({ code: 'CREDENTIALS_TARGET_CHANGED' }),
      );
    }
  });
});

describe('checkEndpointTimeout', () => {
  it('allows up to the installation timeout and refuses beyond, naming the field', () => {
    expect(() => checkEndpointTimeout(15_000, 15_000)).not.toThrow();
    expect(() => checkEndpointTimeout(15_001, 15_000)).toThrow(
      expect.objectContaining({
        code: 'VALIDATION_FAILED',
        details: { issues: [expect.objectContaining({ path: 'timeoutMs' })] },
      }),
    );
  });
});

describe('receiverAuthSchema', () => {
  it('takes each type and refuses unknown fields and bad values', () => {
    expect(
      receiverAuthSchema.safeParse({ type: 'basic', username: 'u', password: 'p' }).success,
    ).toBe(true);
    expect(
      receiverAuthSchema.safeParse({ type: 'basic', username: 'u:x', password: 'p' }).success,
    ).toBe(false);
    expect(receiverAuthSchema.safeParse({ type: 'bearer', token: 't' }).success).toBe(true);
    expect(receiverAuthSchema.safeParse({ type: 'bearer', token: 't\r\nx: y' }).success).toBe(
      false,
    );
    expect(receiverAuthSchema.safeParse({ type: 'bearer', token: 't', extra: 1 }).success).toBe(
      false,
    );
    expect(
      receiverAuthSchema.safeParse({
        type: 'oauth2_client_credentials',
        tokenUrl: 'https://auth.example/token',
        clientId: 'id',
        clientSecret: 's',
      }).success,
    ).toBe(true);
    expect(
      receiverAuthSchema.safeParse({
        type: 'oauth2_client_credentials',
        tokenUrl: 'ftp://auth.example/token',
        clientId: 'id',
        clientSecret: 's',
      }).success,
    ).toBe(false);
    expect(
      receiverAuthSchema.safeParse({ type: 'mtls', certificate: 'x', privateKey: 'y' }).success,
    ).toBe(false);
    expect(receiverAuthSchema.safeParse({ type: 'digest' }).success).toBe(false);
  });
});
