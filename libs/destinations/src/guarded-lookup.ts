import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'node:dns';
import { isPrivateAddress } from '@hookbase/domain';

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** Resolves every address of a name (the shape of `dns.lookup` with `all: true`). */
export type Resolver = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) =>
  dnsLookup(hostname, options, (error, addresses) => callback(error, addresses ?? []));

/**
 * A DNS lookup for outgoing connections that refuses private, loopback and link-local addresses.
 * Checking at connect time (not only when the endpoint is saved) defeats DNS rebinding.
 */
export function createGuardedLookup(resolve: Resolver = systemResolver) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (error, list) => {
      if (error) return callback(error, []);
      const refused = list.find((entry) => isPrivateAddress(entry.address));
      if (refused) {
        const denied: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to ${refused.address}, a private address (HOOKBASE_ALLOW_PRIVATE_TARGETS is off)`,
        );
        denied.code = 'URL_NOT_ALLOWED';
        return callback(denied, []);
      }
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

export const guardedLookup = createGuardedLookup();
