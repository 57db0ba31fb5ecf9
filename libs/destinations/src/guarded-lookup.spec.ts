import { LookupAddress } from 'node:dns';
import { guardedLookup } from './guarded-lookup';

function lookup(hostname: string, all: boolean) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }>(
    (resolve) => guardedLookup(hostname, { all }, (error, address) => resolve({ error, address })),
  );
}

describe('guardedLookup', () => {
  it('refuses a name that resolves to a loopback address, whatever the URL said', async () => {
    for (const all of [false, true]) {
      const { error } = await lookup('localhost', all);
      expect(error?.code).toBe('URL_NOT_ALLOWED');
      expect(error?.message).toMatch(/private address/);
    }
  });

  it('passes resolution errors through unchanged', async () => {
    const { error } = await lookup('does-not-exist.invalid', false);
    expect(error?.code).not.toBe('URL_NOT_ALLOWED');
    expect(error).toBeTruthy();
  });
});
