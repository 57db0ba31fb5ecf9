import { rootCertificates } from 'node:tls';
import { Agent, Dispatcher, ProxyAgent, request } from 'undici';
import {
  bypassesProxy,
  classifyAttempt,
  AttemptResult,
  checkTargetUrl,
  DomainError,
  type NoProxyRule,
  type ReceiverOptions,
} from '@hookbase/domain';
import { webhookHeaders } from '@hookbase/signing';
import {
  DeliveryReport,
  DeliveryTarget,
  DestinationAdapter,
  OutboundMessage,
  payloadBody,
} from './destination.adapter';
import { ClientCache, clientKey } from './cloud-support';
import { createGuardedLookup, resolveTargetName, Resolver } from './guarded-lookup';
import { OAuth2TokenCache, TokenFetchError } from './oauth2-token-cache';
import { AttemptDeadline, attemptDeadline } from './attempt-deadline';

export interface HttpAdapterOptions {
  timeoutMs: number;
  connectTimeoutMs: number;
  allowPrivateTargets: boolean;
  responseExcerptBytes: number;
  userAgent: string;
  /** Name resolution for connections; the system's by default (a seam for tests). */
  resolver?: Resolver;
  /** HOOKBASE_EGRESS_PROXY: an HTTP proxy that requests tunnel through with CONNECT. */
  egressProxy?: { url: string; noProxy: readonly NoProxyRule[] } | null;
  /**
   * Connections open at once to one origin (or to the proxy) at most; requests beyond wait for
   * one. The dispatcher gives its whole pool of attempts in flight (HOOKBASE_DISPATCH_CONCURRENCY),
   * so that many endpoints on one receiver host never queue behind each other here, where their
   * attempts' time runs. 64 when not given.
   */
  connectionsPerOrigin?: number;
}

const DEFAULT_CONNECTIONS_PER_ORIGIN = 64;

interface TlsMaterial {
  cert?: string;
  key?: string;
  ca?: string[];
}

/**
 * Delivers to HTTP webhooks: POST of the payload with Standard Webhooks headers, redirects never
 * followed, bounded connect and total time, and a bounded excerpt of the response kept.
 */
export class HttpDestinationAdapter implements DestinationAdapter {
  readonly kind = 'http' as const;
  private readonly agent: Agent;
  /**
   * Agents of endpoints with a client certificate or a CA of their own, and proxy agents, by
   * their TLS material and route.
   */
  private readonly agents: ClientCache<Dispatcher>;
  private readonly tokens: OAuth2TokenCache;

  constructor(private readonly options: HttpAdapterOptions) {
    this.agent = this.newAgent({});
    this.agents = new ClientCache((agent) => agent.close(), 64);
    this.tokens = new OAuth2TokenCache({
      dispatcherFor: (url) => this.dispatcherFor(url, null),
      allowPrivateTargets: options.allowPrivateTargets,
      timeoutMs: options.timeoutMs,
      userAgent: options.userAgent,
    });
  }

  private newAgent(tls: TlsMaterial): Agent {
    return new Agent({
      connect: {
        timeout: this.options.connectTimeoutMs,
        ...(this.options.allowPrivateTargets
          ? {}
          : { lookup: createGuardedLookup(this.options.resolver) }),
        ...tls,
      },
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
      keepAliveTimeout: 4_000,
      connections: this.options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
    });
  }

  /**
   * How a request to `url` leaves: through the egress proxy unless HOOKBASE_EGRESS_NO_PROXY
   * matches it, with the endpoint's client certificate and CA when it has them, else the shared
   * agent. Through the proxy the name is resolved and checked here first (the proxy resolves it
   * again; see the receivers guide): a name resolving into this network throws URL_NOT_ALLOWED.
   */
  private async dispatcherFor(
    url: URL,
    receiver: ReceiverOptions | null | undefined,
  ): Promise<Dispatcher> {
    const mtls = receiver?.auth?.type === 'mtls' ? receiver.auth : null;
    const tls: TlsMaterial | null =
      mtls || receiver?.tlsCa
        ? {
            ...(mtls ? { cert: mtls.certificate, key: mtls.privateKey } : {}),
            // The endpoint's CA is trusted beside the usual ones, for this endpoint only.
            ...(receiver?.tlsCa ? { ca: [...rootCertificates, receiver.tlsCa] } : {}),
          }
        : null;
    const proxy = this.options.egressProxy;
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    if (proxy && !bypassesProxy(url.hostname, port, proxy.noProxy)) {
      if (!this.options.allowPrivateTargets) {
        await resolveTargetName(url.hostname.replace(/^\[|\]$/g, ''), {
          allowPrivate: false,
          timeoutMs: this.options.connectTimeoutMs,
          resolver: this.options.resolver,
        });
      }
      return this.agents.get(
        clientKey(['proxy', tls?.cert, tls?.key, receiver?.tlsCa]),
        () =>
          new ProxyAgent({
            uri: proxy.url,
            proxyTunnel: true,
            ...(tls ? { requestTls: tls } : {}),
            headersTimeout: this.options.timeoutMs,
            bodyTimeout: this.options.timeoutMs,
            keepAliveTimeout: 4_000,
            connections: this.options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
          }),
      );
    }
    if (!tls) return this.agent;
    return this.agents.get(clientKey(['direct', tls.cert, tls.key, receiver?.tlsCa]), () =>
      this.newAgent(tls),
    );
  }

  async deliver(message: OutboundMessage, target: DeliveryTarget): Promise<DeliveryReport> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    let url: URL;
    try {
      url = checkTargetUrl(target.url ?? '', { allowPrivate: this.options.allowPrivateTargets });
    } catch (error) {
      const reason = error instanceof DomainError ? error.message : String(error);
      return { outcome: { kind: 'failed', error: reason }, durationMs: 0, responseExcerpt: null };
    }
    const body = payloadBody(message.payload);
    let signature: ReturnType<typeof webhookHeaders>;
    try {
      // A fresh timestamp and signature on every attempt, with every secret that signs now.
      signature = webhookHeaders({
        messageId: message.webhookId,
        timestampSeconds: Math.floor(Date.now() / 1000),
        body,
        secrets: target.secrets,
      });
    } catch (error) {
      const reason = `cannot sign: ${error instanceof Error ? error.message : String(error)}`;
      return { outcome: { kind: 'failed', error: reason }, durationMs: 0, responseExcerpt: null };
    }
    const receiver = target.receiver ?? null;
    // The endpoint's own headers first: none of them can be a name Hookbase sets (refused on save).
    const headers: Record<string, string> = {};
    for (const [name, value] of receiver?.headers ?? []) headers[name] = value;
    Object.assign(headers, {
      'content-type': 'application/json',
      'user-agent': this.options.userAgent,
      ...signature,
      'hookbase-event-id': message.eventId,
      'hookbase-event-type': message.eventType,
      'hookbase-attempt': String(message.attemptNumber),
    });
    const timeoutMs = Math.min(
      receiver?.timeoutMs ?? this.options.timeoutMs,
      this.options.timeoutMs,
    );
    const auth = receiver?.auth ?? null;
    let result: AttemptResult;
    let excerpt: string | null = null;
    // Each send's deadline also covers reading its answer; all are cleared when the attempt ends.
    const deadlines: AttemptDeadline[] = [];
    try {
      const dispatcher = await this.dispatcherFor(url, receiver);
      const send = async (authorization: string | null) => {
        if (authorization !== null) headers.authorization = authorization;
        const deadline = attemptDeadline(timeoutMs);
        deadlines.push(deadline);
        return request(url, { method: 'POST', headers, body, dispatcher, signal: deadline.signal });
      };
      let response: Dispatcher.ResponseData;
      if (auth?.type === 'oauth2_client_credentials') {
        let token = await this.tokens.token(auth);
        response = await send(`Bearer ${token.accessToken}`);
        if (response.statusCode === 401 && token.cached) {
          // The receiver no longer takes the cached token: fetch a new one once and send again.
          await response.body.dump();
          this.tokens.forget(auth);
          token = await this.tokens.token(auth);
          response = await send(`Bearer ${token.accessToken}`);
        }
      } else {
        response = await send(authorizationOf(auth));
      }
      excerpt = await readExcerpt(response.body, this.options.responseExcerptBytes);
      const retryAfter = response.headers['retry-after'];
      result = {
        type: 'response',
        status: response.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
      };
    } catch (error) {
      if (error instanceof TokenFetchError) {
        // No token, nothing sent: retried on the endpoint's schedule, the reason in lastError.
        return {
          outcome: error.permanent
            ? { kind: 'failed', error: error.message }
            : { kind: 'retry', error: error.message },
          durationMs: elapsed(),
          responseExcerpt: null,
        };
      }
      result = transportFailure(error);
      if (result.type === 'network' && errorCode(error) === 'URL_NOT_ALLOWED') {
        return {
          outcome: { kind: 'failed', error: result.message },
          durationMs: elapsed(),
          responseExcerpt: null,
        };
      }
    } finally {
      for (const deadline of deadlines) deadline.clear();
    }
    return {
      outcome: classifyAttempt(result, new Date()),
      durationMs: elapsed(),
      responseExcerpt: excerpt,
    };
  }

  async close(): Promise<void> {
    await this.agents.close();
    await this.agent.close();
  }
}

/** The Authorization header of basic and bearer auth; null for none (mTLS is on the connection). */
function authorizationOf(auth: ReceiverOptions['auth']): string | null {
  switch (auth?.type) {
    case undefined:
    case 'mtls':
    case 'oauth2_client_credentials':
      return null;
    case 'basic':
      return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`;
    case 'bearer':
      return `Bearer ${auth.token}`;
  }
}

async function readExcerpt(
  body: Dispatcher.ResponseData['body'],
  limit: number,
): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= limit) {
      // Enough kept: stop reading a large response rather than download it all.
      body.destroy();
      break;
    }
  }
  if (size === 0) return null;
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

interface TransportError {
  name?: string;
  code?: string;
  message?: string;
  cause?: { code?: string; message?: string };
}

/** undici reports connection errors either directly or as the cause of its own error. */
function errorCode(error: unknown): string | undefined {
  const err = error as TransportError;
  return err.code ?? err.cause?.code;
}

function transportFailure(error: unknown): AttemptResult {
  const err = error as TransportError;
  const timeouts = ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];
  if (
    err.name === 'TimeoutError' ||
    err.name === 'AbortError' ||
    timeouts.includes(err.code ?? '')
  ) {
    return { type: 'timeout' };
  }
  const code = errorCode(error);
  const message = err.cause?.message ?? err.message ?? String(error);
  return {
    type: 'network',
    message: code && !message.includes(code) ? `${code} ${message}` : message,
  };
}
