import { isIP } from 'node:net';
import { DomainError } from './errors';

/**
 * Refusing delivery targets that point into the installation's own network (SSRF). Here: the
 * rules on addresses and on a URL as written. Host names are resolved and their addresses checked
 * with `isPrivateAddress` when saved and again at every connection (against DNS rebinding).
 */

type Ipv4Range = readonly [network: string, prefixLength: number];

/** IPv4 ranges that are not the public internet (RFC 6890 and friends). */
const PRIVATE_IPV4_RANGES: readonly Ipv4Range[] = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, where cloud metadata services listen
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, 255.255.255.255 (broadcast) included
];

function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}

function isPrivateIpv4(value: number): boolean {
  return PRIVATE_IPV4_RANGES.some(([network, prefixLength]) => {
    const size = 2 ** (32 - prefixLength);
    return Math.floor(value / size) === Math.floor(ipv4ToNumber(network) / size);
  });
}

/** The eight 16-bit groups of a syntactically valid IPv6 address, a dotted IPv4 tail included. */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const value = ipv4ToNumber(dotted[1]);
    const tail = `${Math.floor(value / 0x10000).toString(16)}:${(value % 0x10000).toString(16)}`;
    text = text.slice(0, dotted.index + 1) + tail;
  }
  const [head, rest] = text.split('::');
  const groups = (part: string | undefined) =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const left = groups(head);
  const right = groups(rest);
  const gap = rest === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<number>(gap).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 address carries and reaches, for the forms that carry one: IPv4-mapped
 * `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4
 * `2002:aabb:ccdd::/48` and Teredo `2001:0::/32` (whose client address is the low 32 bits
 * inverted). `null` for any other address.
 */
function embeddedIpv4(groups: readonly number[]): number | null {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const low32 = groups[6] * 0x10000 + groups[7];
  if (zeros(0, 5) && groups[5] === 0xffff) return low32; // ::ffff:a.b.c.d
  if (zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0) return low32; // ::ffff:0:a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return low32; // 64:ff9b::/96
  if (groups[0] === 0x2002) return groups[1] * 0x10000 + groups[2]; // 6to4 2002::/16
  if (groups[0] === 0x2001 && groups[1] === 0) {
    return (groups[6] ^ 0xffff) * 0x10000 + (groups[7] ^ 0xffff); // Teredo 2001::/32
  }
  return null;
}

function isPrivateIpv6(groups: number[]): boolean {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  // ::/96: the unspecified :: and loopback ::1, and the deprecated IPv4-compatible ::a.b.c.d,
  // where no legitimate receiver lives (private whatever the IPv4 inside, so stricter than its
  // embedded address alone).
  if (zeros(0, 6)) return true;
  // 64:ff9b:1::/48 is for NAT64 inside one network (RFC 8215), with the IPv4 address at a place
  // each network chooses: never a public receiver.
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups[2] === 1) return true;
  const embedded = embeddedIpv4(groups);
  if (embedded !== null) return isPrivateIpv4(embedded);
  const first = groups[0];
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xffc0) === 0xfec0 || // site-local fec0::/10 (deprecated, private by definition)
    (first & 0xff00) === 0xff00 // multicast ff00::/8
  );
}

/**
 * Whether an IP address is loopback, private, link-local, multicast or otherwise not a public
 * internet host. Throws VALIDATION_FAILED for anything that is not an IP address.
 */
export function isPrivateAddress(ip: string): boolean {
  const address = ip.split('%')[0]; // a zone (fe80::1%eth0) only says which interface
  switch (isIP(address)) {
    case 4:
      return isPrivateIpv4(ipv4ToNumber(address));
    case 6:
      return isPrivateIpv6(ipv6Groups(address));
    default:
      throw new DomainError('VALIDATION_FAILED', `${JSON.stringify(ip)} is not an IP address`);
  }
}

export const MAX_TARGET_URL_LENGTH = 2048;

/**
 * Parses and checks a delivery URL: http or https, no credentials, a host, at most 2048
 * characters; and, unless private targets are allowed, a host that is neither a private IP
 * literal nor a localhost name. Returns the URL as WHATWG normalises it (`http://0x7f000001/`
 * becomes `http://127.0.0.1/`), which is what gets checked, stored and connected to.
 */
export function checkTargetUrl(raw: string, options: { allowPrivate: boolean }): URL {
  if (raw.length > MAX_TARGET_URL_LENGTH) {
    throw new DomainError('INVALID_URL', `URL is longer than ${MAX_TARGET_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not echoed: an unparseable URL may still carry a password.
    throw new DomainError('INVALID_URL', 'Not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DomainError('INVALID_URL', `URL scheme must be http or https, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new DomainError('INVALID_URL', 'URL must not carry credentials (user:password@)');
  }
  if (url.hostname === '') throw new DomainError('INVALID_URL', 'URL has no host');
  if (url.href.length > MAX_TARGET_URL_LENGTH) {
    throw new DomainError(
      'INVALID_URL',
      `URL is longer than ${MAX_TARGET_URL_LENGTH} characters once normalised`,
    );
  }
  if (!options.allowPrivate && isPrivateHost(url.hostname)) {
    throw new DomainError(
      'URL_NOT_ALLOWED',
      `${url.hostname} is a private, loopback or link-local address; set HOOKBASE_ALLOW_PRIVATE_TARGETS=true to allow it`,
      { host: url.hostname },
    );
  }
  return url;
}

/** A normalised URL host that points inside without asking DNS. */
function isPrivateHost(hostname: string): boolean {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname.replace(/\.+$/, '');
  if (isIP(host) !== 0) return isPrivateAddress(host);
  // RFC 6761: localhost and every name under it are loopback, whatever DNS says.
  return host === 'localhost' || host.endsWith('.localhost');
}
