import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, AgentOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, ConnectionOptions } from 'node:tls';
import type { Socket } from 'node:net';
import { bypassesProxy, type NoProxyRule } from '@hookbase/domain';

/** The egress proxy as configured (HOOKBASE_EGRESS_PROXY and HOOKBASE_EGRESS_NO_PROXY). */
export interface EgressProxy {
  url: string;
  noProxy: readonly NoProxyRule[];
}

/** Checks a destination's name before the proxy is asked for it (the target policy). */
export type TargetCheck = (host: string) => Promise<void>;

type Callback = (error: Error | null, socket?: Duplex) => void;
type ConnectionRequest = ConnectionOptions & { host?: string; port?: number | string };

/**
 * Opens a tunnel to `host:port` through the proxy with CONNECT: the socket once the proxy
 * answered 2xx. Proxy credentials in the URL go as Proxy-Authorization (Basic).
 */
function tunnel(
  proxy: URL,
  host: string,
  port: number,
  timeoutMs: number | undefined,
  done: (error: Error | null, socket?: Socket) => void,
): void {
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const headers: Record<string, string> = { host: authority };
  if (proxy.username) {
    const user = decodeURIComponent(proxy.username);
    const password = decodeURIComponent(proxy.password);
    headers['proxy-authorization'] =
      `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }
  const connect = httpRequest({
    host: proxy.hostname.replace(/^\[|\]$/g, ''),
    port: Number(proxy.port || 80),
    method: 'CONNECT',
    path: authority,
    headers,
    agent: false,
    ...(timeoutMs ? { timeout: timeoutMs } : {}),
  });
  let settled = false;
  const finish = (error: Error | null, socket?: Socket) => {
    if (settled) return;
    settled = true;
    done(error, socket);
  };
  connect.once('connect', (response, socket) => {
    if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) >= 300) {
      socket.destroy();
      finish(new Error(`egress proxy refused CONNECT to ${authority}: ${response.statusCode}`));
      return;
    }
    finish(null, socket);
  });
  connect.once('timeout', () => {
    connect.destroy();
    finish(new Error(`egress proxy did not answer CONNECT to ${authority} in time`));
  });
  connect.once('error', (error) => finish(new Error(`egress proxy: ${error.message}`)));
  connect.end();
}

function portOf(options: ConnectionRequest, fallback: number): number {
  return Number(options.port ?? fallback) || fallback;
}

/**
 * Node agents (for SDKs built on node:http, such as the AWS SDK's request handler) that reach
 * their destinations through the egress proxy with CONNECT, for http and https alike, except the
 * destinations HOOKBASE_EGRESS_NO_PROXY lets go straight. `checkTarget` runs before the proxy is
 * asked (the target policy for names a user chose); the proxy resolves the name again.
 */
export function proxiedAgents(
  proxy: EgressProxy,
  options: AgentOptions & { connectTimeoutMs?: number; checkTarget?: TargetCheck },
): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
  const proxyUrl = new URL(proxy.url);
  const { connectTimeoutMs, checkTarget, ...agentOptions } = options;
  const open = (
    request: ConnectionRequest,
    secure: boolean,
    direct: () => Duplex,
    callback: Callback,
  ): Duplex | undefined => {
    const host = String(request.host ?? 'localhost');
    const port = portOf(request, secure ? 443 : 80);
    if (bypassesProxy(host, port, proxy.noProxy)) return direct();
    const checked = checkTarget ? checkTarget(host) : Promise.resolve();
    checked.then(
      () =>
        tunnel(proxyUrl, host, port, connectTimeoutMs, (error, socket) => {
          if (error || !socket) return callback(error ?? new Error('no tunnel'));
          if (!secure) return callback(null, socket);
          const tls = tlsConnect({ ...request, socket, servername: request.servername ?? host });
          callback(null, tls);
        }),
      (error: Error) => callback(error),
    );
    return undefined;
  };

  class ProxiedHttpAgent extends HttpAgent {
    override createConnection(request: ConnectionRequest, callback: Callback): Duplex | undefined {
      return open(
        request,
        false,
        () => super.createConnection(request as never, callback as never) as Duplex,
        callback,
      );
    }
  }
  class ProxiedHttpsAgent extends HttpsAgent {
    override createConnection(request: ConnectionRequest, callback: Callback): Duplex | undefined {
      return open(
        request,
        true,
        () => super.createConnection(request as never, callback as never) as Duplex,
        callback,
      );
    }
  }
  return {
    httpAgent: new ProxiedHttpAgent(agentOptions),
    httpsAgent: new ProxiedHttpsAgent(agentOptions),
  };
}
