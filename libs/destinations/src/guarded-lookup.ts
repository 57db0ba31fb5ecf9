import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'node:dns';
import { DomainError, isPrivateAddress } from '@hookbase/domain';

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

export const systemResolver: Resolver = (hostname, options, callback) =>
  dnsLookup(hostname, options, (error, addresses) => callback(error, addresses ?? []));

/**
 * The refusal of a name that resolves into this network. Its text never names the address the
 * name resolved to: that would tell a tenant what lives inside.
 */
export function privateNameError(hostname: string): NodeJS.ErrnoException {
  const denied: NodeJS.ErrnoException = new Error(
    `${hostname} resolves to a private, loopback or link-local address (HOOKBASE_ALLOW_PRIVATE_TARGETS is off)`,
  );
  denied.code = 'URL_NOT_ALLOWED';
  return denied;
}

/** Whether an error is a refusal by the target policy (at connect time or before). */
export function isTargetRefusal(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const shape = current as { code?: unknown; cause?: unknown; message?: unknown };
    if (shape.code === 'URL_NOT_ALLOWED') return true;
    // The AWS SDK may keep only the text of an error from another realm.
    if (typeof shape.message === 'string' && /private, loopback or link-local/.test(shape.message))
      return true;
    current = shape.cause;
  }
  return false;
}

/**
 * A DNS lookup for outgoing connections that refuses private, loopback and link-local addresses.
 * Checking at connect time (not only when the endpoint is saved) defeats DNS rebinding.
 */
export function createGuardedLookup(resolve: Resolver = systemResolver) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (error, list) => {
      if (error) return callback(error, []);
      if (list.length === 0 || list.some((entry) => isPrivateAddress(entry.address))) {
        return callback(privateNameError(hostname), []);
      }
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

export const guardedLookup = createGuardedLookup();

/**
 * Every address of a name, within `timeoutMs`; with `allowPrivate` false, refused (code
 * URL_NOT_ALLOWED) when any of them is private. Rejects with the resolver's error when the lookup
 * fails, and with a TimeoutError when it takes too long.
 */
export function resolveTargetName(
  hostname: string,
  options: { allowPrivate: boolean; timeoutMs: number; resolver?: Resolver },
): Promise<LookupAddress[]> {
  const resolve = options.resolver ?? systemResolver;
  return new Promise((settle, reject) => {
    const timer = setTimeout(() => {
      const error: NodeJS.ErrnoException = new Error(
        `${hostname} was not resolved within ${options.timeoutMs} ms`,
      );
      error.name = 'TimeoutError';
      error.code = 'ETIMEDOUT';
      reject(error);
    }, options.timeoutMs);
    timer.unref();
    resolve(hostname, { all: true }, (error, list) => {
      clearTimeout(timer);
      if (error) return reject(error);
      if (list.length === 0) {
        const none: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
        none.code = 'ENOTFOUND';
        return reject(none);
      }
      if (!options.allowPrivate && list.some((entry) => isPrivateAddress(entry.address))) {
        return reject(privateNameError(hostname));
      }
      settle(list);
    });
  });
}

/**
 * The check of a target's host name when an endpoint is saved (unless private targets are
 * allowed): a name resolving into this network is refused (URL_NOT_ALLOWED; the message names the
 * field and the host, never an address it resolved to). With `refuseUnresolved`, so is a name
 * whose lookup fails or times out, since what it would resolve to cannot be known; without it such
 * a name passes, left to the check at every connection.
 */
export async function checkTargetName(
  url: URL,
  field: string,
  options: {
    allowPrivate: boolean;
    timeoutMs: number;
    resolver?: Resolver;
    refuseUnresolved: boolean;
  },
): Promise<void> {
  if (options.allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  try {
    await resolveTargetName(host, options);
  } catch (error) {
    if (isTargetRefusal(error)) {
      throw new DomainError(
        'URL_NOT_ALLOWED',
        `${field}: ${host} resolves to a private, loopback or link-local address; set HOOKBASE_ALLOW_PRIVATE_TARGETS=true to allow it`,
        { host },
      );
    }
    if (!options.refuseUnresolved) return;
    const code = (error as NodeJS.ErrnoException).code;
    throw new DomainError(
      'URL_NOT_ALLOWED',
      `${field}: ${host} could not be resolved${code ? ` (${code})` : ''}; a name that cannot be checked is not allowed`,
      { host },
    );
  }
}
