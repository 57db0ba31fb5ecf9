import type { LookupAddress } from 'node:dns';

/** A resolver shaped like `dns.lookup` with `all: true`, answering from a table. */
export type StubResolver = ((
  hostname: string,
  options: object,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void) & { asked: string[] };

/**
 * Names that resolve as the test says, without asking DNS (no packet leaves the machine); a name
 * not in the table fails as ENOTFOUND. `asked` lists every name looked up, in order.
 */
export function stubResolver(table: Record<string, string[]>): StubResolver {
  const asked: string[] = [];
  const resolve = ((hostname, _options, callback) => {
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
  }) as StubResolver;
  resolve.asked = asked;
  return resolve;
}
