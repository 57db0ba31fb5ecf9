import { hash } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  checkTargetUrl,
  DomainError,
  hostIdentityRefusal,
  type AttemptOutcome,
  type HostIdentityGrant,
} from '@hookbase/domain';
import type { DeliveryReport, DeliveryTarget, OutboundMessage } from './destination.adapter';
import {
  cloudTargetScope,
  type AwsCredentials,
  type CloudDestinationKind,
} from './destination-config';
import { proxiedAgents, type EgressProxy } from './connect-proxy-agent';
import { createGuardedLookup, guardedLookup, type Resolver } from './guarded-lookup';

/** What every cloud adapter is built with (from the dispatcher's configuration). */
export interface CloudAdapterOptions {
  /** Total time for one attempt (request and response). */
  timeoutMs: number;
  /** Time to connect to the service. */
  connectTimeoutMs: number;
  /**
   * Whether an endpoint override (`config.endpoint`) may point at a private, loopback or
   * link-local address (emulators on 127.0.0.1 need it). Checked on every attempt, and at
   * connection time for names (DNS rebinding). Regional service endpoints are never checked.
   */
  allowPrivateTargets: boolean;
  /** Most SDK clients kept open at once (one per region, endpoint and credentials). */
  maxClients?: number;
  /** How names of endpoint overrides are resolved (the system's DNS unless a test injects one). */
  resolver?: Resolver;
  /**
   * The egress proxy the AWS kinds (SQS, SNS, EventBridge, S3) and Pub/Sub's gRPC channel go
   * through with CONNECT; null or absent: straight.
   */
  egressProxy?: EgressProxy | null;
}

/**
 * The attributes every cloud delivery carries (SQS/SNS message attributes, Pub/Sub attributes,
 * S3 object metadata). `webhook-id` is stable across retries and replays, as in HTTP deliveries.
 */
export function deliveryAttributes(message: OutboundMessage): Record<string, string> {
  return {
    'webhook-id': message.webhookId,
    'hookbase-message-id': message.messageId,
    'hookbase-event-id': message.eventId,
    'hookbase-event-type': message.eventType,
    'hookbase-attempt': String(message.attemptNumber),
  };
}

/** A stable cache key that does not keep credentials readable in memory dumps of the map. */
export function clientKey(parts: unknown[]): string {
  return hash('sha256', JSON.stringify(parts), 'hex');
}

/**
 * SDK clients by key, least recently used dropped beyond `max`. A dropped client is destroyed
 * only after `graceMs`, so an attempt still using it finishes.
 */
export class ClientCache<T> {
  private readonly clients = new Map<string, T>();
  /** Dropped clients waiting out their grace period. */
  private readonly dropped = new Map<NodeJS.Timeout, T>();

  constructor(
    private readonly destroy: (client: T) => Promise<void> | void,
    private readonly max = 64,
    private readonly graceMs = 60_000,
  ) {}

  get(key: string, create: () => T): T {
    const existing = this.clients.get(key);
    if (existing !== undefined) {
      // Map keeps insertion order: re-inserting marks it most recently used.
      this.clients.delete(key);
      this.clients.set(key, existing);
      return existing;
    }
    const client = create();
    this.clients.set(key, client);
    while (this.clients.size > this.max) {
      const [oldestKey, oldest] = this.clients.entries().next().value as [string, T];
      this.clients.delete(oldestKey);
      const timer = setTimeout(() => {
        this.dropped.delete(timer);
        void Promise.resolve(this.destroy(oldest)).catch(() => {});
      }, this.graceMs);
      timer.unref();
      this.dropped.set(timer, oldest);
    }
    return client;
  }

  get size(): number {
    return this.clients.size;
  }

  async close(): Promise<void> {
    const all = [...this.clients.values(), ...this.dropped.values()];
    this.clients.clear();
    for (const timer of this.dropped.keys()) clearTimeout(timer);
    this.dropped.clear();
    await Promise.all(all.map((client) => Promise.resolve(this.destroy(client)).catch(() => {})));
  }
}

/**
 * Checks an endpoint override against the private-target rule (a literal address or localhost;
 * names are checked again when connecting). Throws the DomainError (`INVALID_URL`,
 * `URL_NOT_ALLOWED`).
 */
export function checkEndpointOverride(
  endpoint: string | undefined,
  allowPrivateTargets: boolean,
): void {
  if (endpoint !== undefined) checkTargetUrl(endpoint, { allowPrivate: allowPrivateTargets });
}

/**
 * Refuses (CREDENTIALS_REQUIRED) a cloud endpoint without credentials of its own unless its
 * organization's grant lets it use the host's identity for this target; never with an endpoint
 * override. Checked when the endpoint is saved and again before every attempt, so an adapter never
 * falls back to the SDK's default chain for a target the grant does not cover.
 */
export function checkCloudIdentity(
  kind: CloudDestinationKind,
  config: Record<string, unknown>,
  grant: HostIdentityGrant | null | undefined,
): void {
  if (config.credentials !== undefined) return;
  const refusal = hostIdentityRefusal(grant, cloudTargetScope(kind, config));
  if (refusal !== null) throw new DomainError('CREDENTIALS_REQUIRED', refusal);
}

/**
 * What every cloud adapter checks before an attempt, on the config it parsed: the endpoint
 * override against the private-target rule, and who may sign for the target.
 */
export function checkBeforeSend(
  kind: CloudDestinationKind,
  config: { endpoint?: string },
  target: DeliveryTarget,
  options: CloudAdapterOptions,
): void {
  checkEndpointOverride(config.endpoint, options.allowPrivateTargets);
  checkCloudIdentity(kind, config as Record<string, unknown>, target.hostIdentity);
}

/** The settings every AWS SDK client of ours shares: one attempt, bounded time, our agents. */
export function awsClientSettings(
  config: { region: string; endpoint?: string; credentials?: AwsCredentials },
  options: CloudAdapterOptions,
) {
  // Only a user-chosen endpoint is resolved through the guard: AWS's own regional names may
  // resolve to private addresses legitimately (VPC endpoints with private DNS).
  const guard = config.endpoint !== undefined && !options.allowPrivateTargets;
  const lookup = guard
    ? options.resolver
      ? createGuardedLookup(options.resolver)
      : guardedLookup
    : undefined;
  const agentOptions = { keepAlive: true, maxSockets: 64, ...(lookup ? { lookup } : {}) };
  const agents = options.egressProxy
    ? proxiedAgents(options.egressProxy, {
        keepAlive: true,
        maxSockets: 64,
        connectTimeoutMs: options.connectTimeoutMs,
        // The proxy resolves the name: the guard looks at it first (a bypassed one connects
        // with the guarded lookup as usual).
        ...(lookup
          ? {
              lookup,
              checkTarget: (host: string) =>
                new Promise<void>((resolve, reject) =>
                  lookup(host, { all: true }, (error) => (error ? reject(error) : resolve())),
                ),
            }
          : {}),
      })
    : { httpAgent: new HttpAgent(agentOptions), httpsAgent: new HttpsAgent(agentOptions) };
  return {
    region: config.region,
    ...(config.endpoint !== undefined ? { endpoint: config.endpoint } : {}),
    ...(config.credentials !== undefined
      ? {
          credentials: {
            accessKeyId: config.credentials.accessKeyId,
            secretAccessKey: config.credentials.secretAccessKey,
            ...(config.credentials.sessionToken !== undefined
              ? { sessionToken: config.credentials.sessionToken }
              : {}),
          },
        }
      : {}),
    // Hookbase retries on its own schedule (and counts attempts): the SDK sends once.
    maxAttempts: 1,
    requestHandler: {
      connectionTimeout: options.connectTimeoutMs,
      requestTimeout: options.timeoutMs,
      throwOnRequestTimeout: true,
      httpAgent: agents.httpAgent,
      httpsAgent: agents.httpsAgent,
    },
  };
}

/** A report for an attempt refused before anything was sent (invalid config, private target). */
export function refusedReport(error: unknown): DeliveryReport {
  const reason =
    error instanceof DomainError || error instanceof Error ? error.message : String(error);
  return { outcome: { kind: 'failed', error: reason }, durationMs: 0, responseExcerpt: null };
}

/** Runs one attempt and turns what it threw into an outcome with `classify`. */
export async function timedAttempt(
  send: () => Promise<{ status: number; excerpt: string | null }>,
  classify: (error: unknown) => Exclude<AttemptOutcome, { kind: 'succeeded' }>,
): Promise<DeliveryReport> {
  const started = performance.now();
  try {
    const { status, excerpt } = await send();
    return {
      outcome: { kind: 'succeeded', status },
      durationMs: performance.now() - started,
      responseExcerpt: excerpt,
    };
  } catch (error) {
    return {
      outcome: classify(error),
      durationMs: performance.now() - started,
      responseExcerpt: null,
    };
  }
}

/** An outcome that an adapter decides itself (e.g. EventBridge's per-entry failure). */
export class AttemptRejected extends Error {
  constructor(readonly outcome: Exclude<AttemptOutcome, { kind: 'succeeded' }>) {
    super(outcome.error);
    this.name = 'AttemptRejected';
  }
}

/** `classify`, except for an AttemptRejected, whose outcome is already decided. */
export function classifyWith(
  classify: (error: unknown) => Exclude<AttemptOutcome, { kind: 'succeeded' }>,
) {
  return (error: unknown) => (error instanceof AttemptRejected ? error.outcome : classify(error));
}

/** The HTTP status an SDK output reports (200 when it says none). */
export function outputStatus(output: { $metadata?: { httpStatusCode?: number } }): number {
  return output.$metadata?.httpStatusCode ?? 200;
}

/**
 * Attributes as SQS and SNS message attributes of type String (both services take this shape).
 */
export function stringAttributes(
  attributes: Record<string, string>,
): Record<string, { DataType: 'String'; StringValue: string }> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => [
      name,
      { DataType: 'String' as const, StringValue: value },
    ]),
  );
}
