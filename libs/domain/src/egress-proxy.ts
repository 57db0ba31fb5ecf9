/**
 * Which destinations go through the egress proxy (HOOKBASE_EGRESS_PROXY): all but those matched by
 * HOOKBASE_EGRESS_NO_PROXY, read as curl and most tools read NO_PROXY: a comma-separated list of
 * `*` (nothing goes through the proxy), host names (matching the name and its subdomains, with or
 * without a leading dot), IP addresses, each optionally with `:port`. Compared case-insensitively.
 */

export interface NoProxyRule {
  host: string;
  port: number | null;
}

export function parseNoProxy(raw: string): NoProxyRule[] {
  return raw
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '')
    .map((entry) => {
      // [v6]:port, v6 alone, host:port, host.
      const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
      if (bracketed)
        return { host: bracketed[1], port: bracketed[2] ? Number(bracketed[2]) : null };
      const colons = entry.split(':').length - 1;
      if (colons === 1) {
        const [host, port] = entry.split(':');
        if (/^\d+$/.test(port)) return { host, port: Number(port) };
      }
      return { host: entry, port: null };
    })
    .map((rule) => ({ ...rule, host: rule.host.replace(/^\*?\./, '') }));
}

/** True when a request to `host`:`port` goes straight to the destination, not through the proxy. */
export function bypassesProxy(host: string, port: number, rules: readonly NoProxyRule[]): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  return rules.some((rule) => {
    if (rule.port !== null && rule.port !== port) return false;
    if (rule.host === '*') return true;
    return name === rule.host || name.endsWith(`.${rule.host}`);
  });
}
