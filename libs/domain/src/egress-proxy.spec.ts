import { bypassesProxy, parseNoProxy } from './egress-proxy';

describe('egress proxy bypass (NO_PROXY)', () => {
  it('reads names, dotted names, wildcards, addresses and ports', () => {
    expect(
      parseNoProxy(
        ' internal.example , .corp.example,*.svc, 10.0.0.1:8080, [::1], [fd00::1]:443,,',
      ),
    ).toEqual([
      { host: 'internal.example', port: null },
      { host: 'corp.example', port: null },
      { host: 'svc', port: null },
      { host: '10.0.0.1', port: 8080 },
      { host: '::1', port: null },
      { host: 'fd00::1', port: 443 },
    ]);
    expect(parseNoProxy('')).toEqual([]);
  });

  it('matches a name and its subdomains, never a suffix that is not a label', () => {
    const rules = parseNoProxy('corp.example');
    expect(bypassesProxy('corp.example', 443, rules)).toBe(true);
    expect(bypassesProxy('API.Corp.Example', 443, rules)).toBe(true);
    expect(bypassesProxy('corp.example.', 443, rules)).toBe(true);
    expect(bypassesProxy('evilcorp.example', 443, rules)).toBe(false);
    expect(bypassesProxy('example', 443, rules)).toBe(false);
  });

  it('honours ports, addresses and *', () => {
    const rules = parseNoProxy('127.0.0.1:8080,::1');
    expect(bypassesProxy('127.0.0.1', 8080, rules)).toBe(true);
    expect(bypassesProxy('127.0.0.1', 8081, rules)).toBe(false);
    expect(bypassesProxy('[::1]', 443, rules)).toBe(true);
    expect(bypassesProxy('anything.example', 1, parseNoProxy('*'))).toBe(true);
    expect(bypassesProxy('anything.example', 1, [])).toBe(false);
  });
});
