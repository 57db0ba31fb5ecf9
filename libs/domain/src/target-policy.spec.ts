import { DomainError } from './errors';
import { checkTargetUrl, isPrivateAddress } from './target-policy';

describe('isPrivateAddress', () => {
  it.each([
    '0.0.0.0',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '100.127.255.255',
    '127.0.0.1',
    '127.1.2.3',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '224.0.0.1',
    '239.255.255.255',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'febf::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::192.168.0.1',
  ])('%s is private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2001:4860:4860::8888',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    'fec0::1',
  ])('%s is public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  it('refuses what is not an IP address', () => {
    expect(() => isPrivateAddress('example.com')).toThrow(DomainError);
  });
});

describe('checkTargetUrl', () => {
  const deny = { allowPrivate: false };
  const codeOf = (raw: string, options = deny) => {
    try {
      checkTargetUrl(raw, options);
      return 'ok';
    } catch (error) {
      return (error as DomainError).code;
    }
  };

  it.each([
    'https://example.com/hooks',
    'HTTP://EXAMPLE.COM/x',
    'http://8.8.8.8:8080/x',
    'https://[2001:4860:4860::8888]/x',
  ])('accepts %s', (url) => {
    expect(codeOf(url)).toBe('ok');
  });

  it.each([
    'http://127.0.0.1/x',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.1/',
    'http://localhost/',
    'http://localhost./',
    'http://api.localhost/',
    'http://0.0.0.0/',
  ])('refuses %s as URL_NOT_ALLOWED', (url) => {
    expect(codeOf(url)).toBe('URL_NOT_ALLOWED');
  });

  it.each([
    'ftp://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'not a url',
    '',
    'https://user:pass@example.com/',
    `https://example.com/${'a'.repeat(2048)}`,
  ])('refuses %s as INVALID_URL', (url) => {
    expect(codeOf(url)).toBe('INVALID_URL');
  });

  it('allows private targets when configured to', () => {
    expect(codeOf('http://127.0.0.1:4000/hooks', { allowPrivate: true })).toBe('ok');
    expect(codeOf('http://localhost/', { allowPrivate: true })).toBe('ok');
    expect(codeOf('ftp://127.0.0.1/', { allowPrivate: true })).toBe('INVALID_URL');
  });
});
