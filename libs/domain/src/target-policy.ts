import { isIP } from 'node:net';
import { DomainError } from './errors';

/** IPv4 ranges that are not the public internet: [network, prefix length]. */
const PRIVATE_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inV4Range(ip: string, [network, bits]: readonly [string, number]): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(v4ToInt(ip) / size) === Math.floor(v4ToInt(network) / size);
}

/** The eight 16-bit groups of an IPv6 address (with an embedded IPv4 tail expanded). */
function v6Groups(ip: string): number[] {
  let text = ip.toLowerCase().split('%')[0];
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4Tail) {
    const n = v4ToInt(v4Tail[1]);
    text =
      text.slice(0, -v4Tail[1].length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => parseInt(g, 16)) : [];
  const left = parse(head);
  const right = parse(tail);
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}

function embeddedV4(groups: number[]): string {
  return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
}

/**
 * Whether an IP address is private, loopback, link-local, multicast or otherwise not a public
 * internet host: a delivery target there could reach this installation's own network.
 */
export function isPrivateAddress(ip: string): boolean {
  const version = isIP(ip.split('%')[0]);
  if (version === 4) return PRIVATE_V4.some((range) => inV4Range(ip, range));
  if (version !== 6) throw new DomainError('VALIDATION_FAILED', `${ip} is not an IP address`);
  const g = v6Groups(ip);
  const allZeroUntil = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (allZeroUntil(8)) return true; // ::
  if (allZeroUntil(7) && g[7] === 1) return true; // ::1
  if (allZeroUntil(5) && g[5] === 0xffff) return isPrivateAddress(embeddedV4(g)); // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return isPrivateAddress(embeddedV4(g)); // NAT64 64:ff9b::/96
  }
  if ((g[0] & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((g[0] & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast ff00::/8
  return false;
}

const MAX_URL_LENGTH = 2048;

/**
 * Parses and checks a delivery URL: http(s), no credentials, a host, and, unless private targets
 * are allowed, not an IP literal or localhost name that points inside. Host names are resolved
 * and checked again at connection time by the HTTP adapter.
 */
export function checkTargetUrl(raw: string, options: { allowPrivate: boolean }): URL {
  if (raw.length > MAX_URL_LENGTH) {
    throw new DomainError('INVALID_URL', `URL is longer than ${MAX_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DomainError('INVALID_URL', `Not a valid URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DomainError('INVALID_URL', `URL scheme must be http or https, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new DomainError('INVALID_URL', 'URL must not carry credentials (user:password@)');
  }
  if (!url.hostname) throw new DomainError('INVALID_URL', 'URL has no host');
  if (options.allowPrivate) return url;
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const localName = host === 'localhost' || host.endsWith('.localhost');
  if (localName || (isIP(host) !== 0 && isPrivateAddress(host))) {
    throw new DomainError(
      'URL_NOT_ALLOWED',
      `${url.hostname} is a private, loopback or link-local address; set HOOKBASE_ALLOW_PRIVATE_TARGETS=true to allow it`,
    );
  }
  return url;
}
