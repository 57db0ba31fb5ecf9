import { Agent, Dispatcher, request } from 'undici';
import { classifyAttempt, AttemptResult, checkTargetUrl, DomainError } from '@hookbase/domain';
import { webhookHeaders } from '@hookbase/signing';
import {
  DeliveryReport,
  DeliveryTarget,
  DestinationAdapter,
  OutboundMessage,
} from './destination.adapter';
import { createGuardedLookup, Resolver } from './guarded-lookup';

export interface HttpAdapterOptions {
  timeoutMs: number;
  connectTimeoutMs: number;
  allowPrivateTargets: boolean;
  responseExcerptBytes: number;
  userAgent: string;
  /** Name resolution for connections; the system's by default (a seam for tests). */
  resolver?: Resolver;
}

/**
 * Delivers to HTTP webhooks: POST of the payload with Standard Webhooks headers, redirects never
 * followed, bounded connect and total time, and a bounded excerpt of the response kept.
 */
export class HttpDestinationAdapter implements DestinationAdapter {
  readonly kind = 'http' as const;
  private readonly agent: Agent;

  constructor(private readonly options: HttpAdapterOptions) {
    this.agent = new Agent({
      connect: {
        timeout: options.connectTimeoutMs,
        ...(options.allowPrivateTargets ? {} : { lookup: createGuardedLookup(options.resolver) }),
      },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4_000,
      connections: 64,
    });
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
    const body = JSON.stringify(message.payload);
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
    const headers = {
      'content-type': 'application/json',
      'user-agent': this.options.userAgent,
      ...signature,
      'hookbase-event-type': message.eventType,
      'hookbase-attempt': String(message.attemptNumber),
    };
    let result: AttemptResult;
    let excerpt: string | null = null;
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      excerpt = await readExcerpt(response.body, this.options.responseExcerptBytes);
      const retryAfter = response.headers['retry-after'];
      result = {
        type: 'response',
        status: response.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
      };
    } catch (error) {
      result = transportFailure(error);
      if (result.type === 'network' && errorCode(error) === 'URL_NOT_ALLOWED') {
        return {
          outcome: { kind: 'failed', error: result.message },
          durationMs: elapsed(),
          responseExcerpt: null,
        };
      }
    }
    return {
      outcome: classifyAttempt(result, new Date()),
      durationMs: elapsed(),
      responseExcerpt: excerpt,
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
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
