import { DomainError } from './errors';
import { checkTargetUrl, isPrivateAddress, MAX_TARGET_URL_LENGTH } from './target-policy';

describe('isPrivateAddress', () => {
  it.each([
    // IPv4, each range at both ends
    ['0.0.0.0', 'this network'],
    ['0.255.255.255', 'this network'],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.0', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.255', 'loopback'],
    ['169.254.0.0', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.255.255', 'link-local'],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.0', 'IETF protocol assignments'],
    ['192.0.0.255', 'IETF protocol assignments'],
    ['192.168.0.0', 'private'],
    ['192.168.255.255', 'private'],
    ['198.18.0.0', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['224.0.0.0', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.0', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback, written out'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['::8.8.8.8', 'IPv4-compatible (deprecated), whatever the IPv4 inside'],
    ['fc00::', 'unique local'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique local'],
    ['fd12:3456:789a::1', 'unique local'],
    ['fe80::', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['FE80::ABCD', 'link-local, upper case'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'site-local (deprecated)'],
    ['feff:ffff::1', 'site-local (deprecated)'],
    ['ff00::', 'multicast'],
    ['ff02::1', 'multicast'],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, in hex'],
    ['::FFFF:10.1.2.3', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'IPv4-mapped private, written out'],
    ['::ffff:0.0.0.0', 'IPv4-mapped this-network'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata, in hex'],
    ['64:ff9b::192.168.0.1', 'NAT64 of private'],
    // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765), by the IPv4 inside
    ['::ffff:0:127.0.0.1', 'IPv4-translated loopback'],
    ['::ffff:0:7f00:1', 'IPv4-translated loopback, in hex'],
    ['0:0:0:0:ffff:0:a00:1', 'IPv4-translated private, written out'],
    ['::ffff:0:169.254.169.254', 'IPv4-translated metadata'],
    // NAT64 local-use prefix 64:ff9b:1::/48 (RFC 8215): inside one network, whatever follows
    ['64:ff9b:1::7f00:1', 'local-use NAT64 of loopback'],
    ['64:ff9b:1::808:808', 'local-use NAT64, even of a public address'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'local-use NAT64, its last address'],
    // 6to4 2002:aabb:ccdd::/48 reaches aa.bb.cc.dd
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:a9fe:a9fe::1', '6to4 of metadata'],
    ['2002:c0a8:101:1:2:3:4:5', '6to4 of private, with a subnet and host'],
    ['2002:a00:1::', '6to4 of 10.0.0.1'],
    ['2002::', '6to4 of 0.0.0.0'],
    // Teredo 2001:0::/32: the client's address is the low 32 bits, inverted
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo of client 127.0.0.1'],
    ['2001::ffff:f5ff:fffe', 'Teredo of client 10.0.0.1, short form'],
    ['2001:0:0:0:0:0:5601:5601', 'Teredo of client 169.254.169.254 (a9fe:a9fe inverted)'],
  ])('%s is private (%s)', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    ['1.1.1.1', 'public'],
    ['8.8.8.8', 'public'],
    ['1.0.0.0', 'just after 0/8'],
    ['9.255.255.255', 'just before 10/8'],
    ['11.0.0.0', 'just after 10/8'],
    ['100.63.255.255', 'just before 100.64/10'],
    ['100.128.0.0', 'just after 100.64/10'],
    ['126.255.255.255', 'just before 127/8'],
    ['128.0.0.0', 'just after 127/8'],
    ['169.253.255.255', 'just before 169.254/16'],
    ['169.255.0.0', 'just after 169.254/16'],
    ['172.15.255.255', 'just before 172.16/12'],
    ['172.32.0.0', 'just after 172.16/12'],
    ['191.255.255.255', 'just before 192.0.0/24'],
    ['192.0.1.0', 'just after 192.0.0/24'],
    ['192.167.255.255', 'just before 192.168/16'],
    ['192.169.0.0', 'just after 192.168/16'],
    ['198.17.255.255', 'just before 198.18/15'],
    ['198.20.0.0', 'just after 198.18/15'],
    ['223.255.255.255', 'just before 224/4'],
    ['2001:4860:4860::8888', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::2:0:0', 'just after ::/96'],
    ['::fffe:7f00:1', 'not IPv4-mapped'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['::ffff:808:808', 'IPv4-mapped public, in hex'],
    ['64:ff9b::8.8.8.8', 'NAT64 of public'],
    ['64:ff9b::808:808', 'NAT64 of public, in hex'],
    ['64:ff9b:0:1::7f00:1', 'not a NAT64 prefix (64:ff9b::/96 is followed by zeros)'],
    ['64:ff9b:2::7f00:1', 'next to the local-use NAT64 prefix'],
    ['::ffff:0:8.8.8.8', 'IPv4-translated public'],
    ['::ffff:1:7f00:1', 'neither IPv4-mapped nor IPv4-translated'],
    ['2002:808:808::', '6to4 of public'],
    ['2002:808:808:ffff:7f00:1::1', '6to4 of public, a private-looking subnet after it'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo of client 8.8.8.8 (inverted)'],
    ['2001:0:4136:e378:8000:63bf:7f00:1', 'Teredo whose low bits read 127.0.0.1 uninverted'],
    ['2001:1::7f00:1', 'just after Teredo 2001::/32'],
    ['2003::7f00:1', 'just after 6to4 2002::/16'],
    ['fbff:ffff::1', 'just before fc00::/7'],
    ['fe00::1', 'between fc00::/7 and fe80::/10'],
    ['fe7f:ffff::1', 'just before fe80::/10'],
  ])('%s is public (%s)', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  it.each([
    'example.com',
    'localhost',
    '',
    '[::1]',
    '127.1',
    '2130706433',
    '0x7f000001',
    '010.0.0.1',
    '256.0.0.1',
    '1::2::3',
    ' 127.0.0.1',
  ])('refuses %p, which is not an IP address', (value) => {
    expect(() => isPrivateAddress(value)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });
});

describe('checkTargetUrl', () => {
  const deny = { allowPrivate: false };
  const allow = { allowPrivate: true };
  const outcomeOf = (raw: string, options = deny): string => {
    try {
      return checkTargetUrl(raw, options).href;
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      return (error as DomainError).code;
    }
  };

  it.each([
    ['https://example.com/hooks', 'https://example.com/hooks'],
    ['HTTP://EXAMPLE.COM/x', 'http://example.com/x'],
    ['HtTpS://Example.com:8443/a?b=c#d', 'https://example.com:8443/a?b=c#d'],
    ['http://8.8.8.8:8080/x', 'http://8.8.8.8:8080/x'],
    ['https://[2001:4860:4860::8888]/x', 'https://[2001:4860:4860::8888]/x'],
    ['http://[::ffff:8.8.8.8]/', 'http://[::ffff:808:808]/'],
    ['https://localhost.example.com/', 'https://localhost.example.com/'],
    ['https://mylocalhost/', 'https://mylocalhost/'],
    ['https://printer.local/', 'https://printer.local/'], // a DNS name: checked when resolved
    ['https://xn--bcher-kva.example/', 'https://xn--bcher-kva.example/'],
    ['  https://example.com/  ', 'https://example.com/'],
  ])('accepts %s as %s', (raw, href) => {
    expect(outcomeOf(raw)).toBe(href);
  });

  it.each([
    'http://127.0.0.1/x',
    'http://127.0.0.1:8080/x',
    'http://127.1/', // WHATWG reads short forms...
    'http://2130706433/', // ...decimal...
    'http://0x7f000001/', // ...hex...
    'http://0177.0.0.1/', // ...and octal as 127.0.0.1
    'http://127.0.0.1./',
    'http://0/',
    'http://0.0.0.0/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/',
    'http://[::]/',
    'http://[0:0:0:0:0:0:0:1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[64:ff9b::169.254.169.254]/',
    'http://[fe80::1]/',
    'http://[fd00::1]:8080/',
    'http://localhost/',
    'http://LOCALHOST:3000/',
    'http://localhost./',
    'http://localhost../',
    'http://api.localhost/',
    'http://a.b.localhost./',
    'http://ｌｏｃａｌｈｏｓｔ/', // full-width letters, mapped to "localhost" by IDNA
    'http://１２７.０.０.１/', // full-width digits, mapped to 127.0.0.1
  ])('refuses %s as URL_NOT_ALLOWED', (raw) => {
    expect(outcomeOf(raw)).toBe('URL_NOT_ALLOWED');
  });

  it('says which host was refused and how to allow it', () => {
    expect(() => checkTargetUrl('http://0x7f000001/', deny)).toThrow(
      '127.0.0.1 is a private, loopback or link-local address; set HOOKBASE_ALLOW_PRIVATE_TARGETS=true to allow it',
    );
  });

  it.each([
    ['', 'empty'],
    ['not a url', 'no scheme'],
    ['example.com/hooks', 'relative'],
    ['//example.com/hooks', 'scheme-relative'],
    ['ftp://example.com/', 'ftp'],
    ['file:///etc/passwd', 'file'],
    ['javascript:alert(1)', 'javascript'],
    ['data:text/plain,hi', 'data'],
    ['ws://example.com/', 'websocket'],
    ['gopher://127.0.0.1:6379/', 'gopher'],
    ['http://', 'no host'],
    ['http://exa mple.com/', 'space in host'],
    ['http://[::1/', 'unclosed bracket'],
    ['http://[fe80::1%25eth0]/', 'zone in the URL'],
    ['http://256.0.0.1/', 'IPv4 out of range'],
    ['https://user:pass@example.com/', 'user and password'],
    ['https://user@example.com/', 'user only'],
    ['https://:pass@example.com/', 'password only'],
    ['http://user:pass@127.0.0.1/', 'credentials, and private'],
  ])('refuses %p as INVALID_URL (%s)', (raw) => {
    expect(outcomeOf(raw)).toBe('INVALID_URL');
    expect(outcomeOf(raw, allow)).toBe('INVALID_URL');
  });

  it('does not echo a URL it cannot parse, which may hold a password', () => {
    expect(() => checkTargetUrl('http://user:s3cret@exa mple.com/', deny)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('s3cret') }),
    );
  });

  it(`accepts ${MAX_TARGET_URL_LENGTH} characters and refuses one more`, () => {
    const base = 'https://example.com/';
    const longest = base + 'a'.repeat(MAX_TARGET_URL_LENGTH - base.length);
    expect(outcomeOf(longest)).toBe(longest);
    expect(outcomeOf(`${longest}a`)).toBe('INVALID_URL');
  });

  it('counts the length once normalised too', () => {
    // 700 spaces are 2100 characters once percent-encoded.
    expect(outcomeOf(`https://example.com/${' '.repeat(700)}x`)).toBe('INVALID_URL');
  });

  it('lets private targets through when they are allowed, and nothing else', () => {
    expect(outcomeOf('http://127.0.0.1:4000/hooks', allow)).toBe('http://127.0.0.1:4000/hooks');
    expect(outcomeOf('http://0x7f000001/', allow)).toBe('http://127.0.0.1/');
    expect(outcomeOf('http://localhost/', allow)).toBe('http://localhost/');
    expect(outcomeOf('http://[::1]:3000/', allow)).toBe('http://[::1]:3000/');
    expect(outcomeOf('ftp://127.0.0.1/', allow)).toBe('INVALID_URL');
  });
});
