import { LookupAddress } from 'node:dns';
import {
  checkTargetName,
  createGuardedLookup,
  isTargetRefusal,
  Resolver,
  resolveTargetName,
} from './guarded-lookup';

/** A resolver that answers from a table, as DNS would (no packet leaves the process). */
function tableResolver(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolver = ((hostname, _options, callback) => {
    asked.push(hostname);
    const addresses = table[hostname];
    setImmediate(() => {
      if (!addresses) {
        const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        error.code = 'ENOTFOUND';
        return callback(error, []);
      }
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    });
  }) as Resolver & { asked: string[] };
  resolver.asked = asked;
  return resolver;
}

const neverAnswers: Resolver = () => undefined;

const resolver = tableResolver({
  'inside.example': ['10.1.2.3'],
  'metadata.example': ['169.254.169.254'],
  'mixed.example': ['93.184.216.34', '::ffff:127.0.0.1'],
  'outside.example': ['93.184.216.34', '2606:2800:220:1::1'],
  'empty.example': [],
});

function lookup(hostname: string, all: boolean) {
  const guarded = createGuardedLookup(resolver);
  return new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }>(
    (resolve) => guarded(hostname, { all }, (error, address) => resolve({ error, address })),
  );
}

describe('guardedLookup', () => {
  it.each(['inside.example', 'metadata.example', 'mixed.example', 'empty.example'])(
    'refuses %s, which resolves (partly) inside, without naming the address',
    async (hostname) => {
      for (const all of [false, true]) {
        const { error } = await lookup(hostname, all);
        expect(error?.code).toBe('URL_NOT_ALLOWED');
        expect(error?.message).toBe(
          `${hostname} resolves to a private, loopback or link-local address (HOOKBASE_ALLOW_PRIVATE_TARGETS is off)`,
        );
        expect(isTargetRefusal(error)).toBe(true);
      }
    },
  );

  it('passes a public name through, one address or all', async () => {
    expect((await lookup('outside.example', false)).address).toBe('93.184.216.34');
    expect((await lookup('outside.example', true)).address).toHaveLength(2);
  });

  it('passes resolution errors through unchanged', async () => {
    const { error } = await lookup('unknown.example', false);
    expect(error?.code).toBe('ENOTFOUND');
    expect(isTargetRefusal(error)).toBe(false);
  });
});

describe('resolveTargetName', () => {
  it('refuses a private address unless private targets are allowed', async () => {
    await expect(
      resolveTargetName('inside.example', { allowPrivate: false, timeoutMs: 1_000, resolver }),
    ).rejects.toMatchObject({ code: 'URL_NOT_ALLOWED' });
    await expect(
      resolveTargetName('inside.example', { allowPrivate: true, timeoutMs: 1_000, resolver }),
    ).resolves.toEqual([{ address: '10.1.2.3', family: 4 }]);
  });

  it('rejects a lookup that takes too long, as a timeout', async () => {
    await expect(
      resolveTargetName('slow.example', {
        allowPrivate: false,
        timeoutMs: 20,
        resolver: neverAnswers,
      }),
    ).rejects.toMatchObject({ name: 'TimeoutError', code: 'ETIMEDOUT' });
  });
});

describe('checkTargetName', () => {
  const check = (
    url: string,
    r: Resolver = resolver,
    allowPrivate = false,
    refuseUnresolved = true,
  ) =>
    checkTargetName(new URL(url), 'config.endpoint', {
      allowPrivate,
      timeoutMs: 50,
      resolver: r,
      refuseUnresolved,
    });

  it('passes a name whose every address is public', async () => {
    await expect(check('https://outside.example/')).resolves.toBeUndefined();
  });

  it('refuses a name resolving inside, naming the host but not the address', async () => {
    const refusal = await check('https://mixed.example:8443/').catch((error: Error) => error);
    expect(refusal).toMatchObject({ code: 'URL_NOT_ALLOWED' });
    expect((refusal as Error).message).toMatch(
      /^config\.endpoint: mixed\.example resolves to a private/,
    );
    expect((refusal as Error).message).not.toMatch(/127\.0\.0\.1|::ffff/);
  });

  it('refuses a name whose lookup fails: what it resolves to cannot be checked', async () => {
    await expect(check('https://unknown.example/')).rejects.toMatchObject({
      code: 'URL_NOT_ALLOWED',
      message: expect.stringMatching(/unknown\.example could not be resolved \(ENOTFOUND\)/),
    });
  });

  it('refuses a name whose lookup times out', async () => {
    await expect(check('https://slow.example/', neverAnswers)).rejects.toMatchObject({
      code: 'URL_NOT_ALLOWED',
      message: expect.stringMatching(/slow\.example could not be resolved \(ETIMEDOUT\)/),
    });
  });

  it('lets an unresolved name through when asked to (it is checked again at every connection)', async () => {
    await expect(
      check('https://unknown.example/', resolver, false, false),
    ).resolves.toBeUndefined();
    await expect(
      check('https://slow.example/', neverAnswers, false, false),
    ).resolves.toBeUndefined();
    await expect(check('https://inside.example/', resolver, false, false)).rejects.toMatchObject({
      code: 'URL_NOT_ALLOWED',
    });
  });

  it('asks nothing when private targets are allowed', async () => {
    const counting = tableResolver({});
    await expect(check('https://unknown.example/', counting, true)).resolves.toBeUndefined();
    expect(counting.asked).toEqual([]);
  });
});
