import { isIPv4 } from 'node:net';
import type { ClientConfig, PubSub, Topic } from '@google-cloud/pubsub';
import type * as PubsubSdk from '@google-cloud/pubsub';
import { lazily } from './lazy-sdk';
import type * as GoogleAuth from 'google-auth-library';
import { bypassesProxy } from '@hookbase/domain';
import {
  checkBeforeSend,
  ClientCache,
  clientKey,
  CloudAdapterOptions,
  deliveryAttributes,
  refusedReport,
  timedAttempt,
} from './cloud-support';
import type { EgressProxy } from './connect-proxy-agent';
import {
  DeliveryReport,
  DeliveryTarget,
  DestinationAdapter,
  OutboundMessage,
  payloadBody,
} from './destination.adapter';
import { parseDestinationConfig, PubsubConfig } from './destination-config';
import { classifyGoogleError } from './google-errors';
import { isTargetRefusal, resolveTargetName } from './guarded-lookup';
import { networkText } from './transport-errors';

/** The SDK, loaded on the first delivery of this kind (see lazily). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = lazily((): typeof PubsubSdk => require('@google-cloud/pubsub'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const auth = lazily((): typeof GoogleAuth => require('google-auth-library'));

interface PubsubClient {
  pubsub: PubSub;
  /** Topic handles by name and ordering (each holds its own publish queues). */
  topics: Map<string, Topic>;
}

/**
 * Delivers to a Pub/Sub topic: one message per delivery, the payload's JSON as data, the delivery
 * attributes as attributes. A FIFO endpoint (`target.ordered`) publishes with the endpoint id as
 * ordering key; subscribers then receive its messages in order when their subscription has
 * message ordering on.
 *
 * `config.endpoint` reaches an emulator over plain gRPC without credentials when it is
 * `http://host:port`, a private endpoint over TLS when it is `https://...`. Its host name is
 * resolved here, before every attempt, and checked against the private-target rule; the channel
 * then dials the checked IPv4 address (TLS and `:authority` still name the host), so the gRPC
 * client never resolves a name of its own (no DNS rebinding between the check and the connect).
 */
export class PubsubDestinationAdapter implements DestinationAdapter {
  readonly kind = 'pubsub' as const;
  private readonly clients: ClientCache<PubsubClient>;

  constructor(private readonly options: CloudAdapterOptions) {
    this.clients = new ClientCache(async ({ pubsub }) => {
      await pubsub.close();
    }, options.maxClients);
  }

  async deliver(message: OutboundMessage, target: DeliveryTarget): Promise<DeliveryReport> {
    let config: PubsubConfig;
    try {
      config = parseDestinationConfig('pubsub', target.config);
      checkBeforeSend(this.kind, config, target, this.options);
    } catch (error) {
      return refusedReport(error);
    }
    let address: string | undefined;
    if (config.endpoint !== undefined) {
      try {
        address = await this.dialAddress(new URL(config.endpoint));
      } catch (error) {
        if (isTargetRefusal(error)) return refusedReport(error);
        // A lookup that failed or took too long may succeed later: the schedule decides.
        return {
          outcome: { kind: 'retry', error: networkText(error) },
          durationMs: 0,
          responseExcerpt: null,
        };
      }
    }
    const ordered = target.ordered === true;
    const topic = this.topic(config, ordered, address);
    const orderingKey = ordered ? target.endpointId : undefined;
    return timedAttempt(async () => {
      try {
        const id = await withDeadline(
          topic.publishMessage({
            data: Buffer.from(payloadBody(message.payload)),
            attributes: deliveryAttributes(message),
            ...(orderingKey !== undefined ? { orderingKey } : {}),
          }),
          // gax enforces the call's own timeout; this also bounds batching and auth.
          this.options.timeoutMs + 1_000,
        );
        return { status: 200, excerpt: JSON.stringify({ messageId: id }) };
      } catch (error) {
        // After a failure the client holds every later message of that key until resumed; the
        // lane decides what is sent next, so the key is opened again at once.
        if (orderingKey !== undefined) topic.resumePublishing(orderingKey);
        throw error;
      }
    }, classifyGoogleError);
  }

  /**
   * The IPv4 address to dial for an endpoint override: a literal as it is (the URL rule checked
   * it), a name resolved and checked (URL_NOT_ALLOWED when it resolves inside and private targets
   * are not allowed).
   */
  private async dialAddress(url: URL): Promise<string> {
    const host = url.hostname;
    if (isIPv4(host)) return host;
    const unsupported = (): never => {
      const error: NodeJS.ErrnoException = new Error(
        `Pub/Sub endpoint overrides need an IPv4 address: ${host} has none`,
      );
      error.code = 'URL_NOT_ALLOWED';
      throw error;
    };
    if (host.startsWith('[')) return unsupported();
    const addresses = await resolveTargetName(host, {
      allowPrivate: this.options.allowPrivateTargets,
      timeoutMs: this.options.connectTimeoutMs,
      resolver: this.options.resolver,
    });
    return addresses.find((entry) => entry.family === 4)?.address ?? unsupported();
  }

  private topic(config: PubsubConfig, ordered: boolean, address: string | undefined): Topic {
    const key = clientKey([
      'pubsub',
      config.projectId,
      config.endpoint,
      address,
      config.credentials,
    ]);
    const client = this.clients.get(key, () => ({
      pubsub: new (sdk().PubSub)(pubsubClientConfig(config, address, this.options.egressProxy)),
      topics: new Map(),
    }));
    const topicKey = `${ordered ? 'ordered' : 'unordered'}:${config.topic}`;
    let topic = client.topics.get(topicKey);
    if (!topic) {
      topic = client.pubsub.topic(config.topic, {
        messageOrdering: ordered,
        // Deliveries run concurrently: a short window lets them share a request without
        // delaying any by more than a few milliseconds.
        batching: { maxMessages: 100, maxMilliseconds: 5 },
        // Hookbase retries on its own schedule: one call, bounded in time.
        gaxOpts: { timeout: this.options.timeoutMs, retry: null },
      });
      client.topics.set(topicKey, topic);
    }
    return topic;
  }

  async close(): Promise<void> {
    await this.clients.close();
  }
}

/** The OAuth scopes the Pub/Sub client asks for (its publisher's, which the subscriber's match). */
const pubsubScopes = lazily(() => {
  const { v1 } = sdk();
  return [...new Set([...v1.PublisherClient.scopes, ...v1.SubscriberClient.scopes])];
});

/** Pub/Sub's own service, when no endpoint override is set. */
const PUBSUB_HOST = 'pubsub.googleapis.com';

/**
 * The client settings for a topic's project, endpoint and credentials. With `address` (the
 * checked address of the endpoint's host) the channel dials it, while TLS verifies the
 * certificate for the host and `:authority` names it. With `proxy` (unless its no_proxy list
 * names the host) the channel dials the proxy and gRPC opens a CONNECT tunnel to the checked
 * address (or the service's host) through it; the proxy variables of the environment are not
 * consulted.
 */
export function pubsubClientConfig(
  config: PubsubConfig,
  address?: string,
  proxy?: EgressProxy | null,
): ClientConfig {
  const settings: ClientConfig & Record<`grpc.${string}`, string | number> = {
    projectId: config.projectId,
  };
  const url = config.endpoint !== undefined ? new URL(config.endpoint) : null;
  const emulator = url?.protocol === 'http:';
  const host = url?.hostname ?? PUBSUB_HOST;
  const port = url?.port || (emulator ? '80' : '443');
  const dialled = address ?? host;
  if (proxy && !bypassesProxy(host, Number(port), proxy.noProxy)) {
    const through = new URL(proxy.url);
    settings.apiEndpoint = `${through.hostname}:${through.port || '80'}`;
    settings['grpc.http_connect_target'] = `dns:///${dialled}:${port}`;
    if (through.username) {
      settings['grpc.http_connect_creds'] =
        `${decodeURIComponent(through.username)}:${decodeURIComponent(through.password)}`;
    }
    settings['grpc.default_authority'] = url?.port ? `${host}:${url.port}` : host;
    if (!emulator) settings['grpc.ssl_target_name_override'] = host;
    settings['grpc.enable_http_proxy'] = 0;
  } else if (url) {
    settings.apiEndpoint = `${dialled}:${port}`;
    if (dialled !== url.hostname) {
      settings['grpc.default_authority'] = url.port ? `${url.hostname}:${url.port}` : url.hostname;
      if (!emulator) settings['grpc.ssl_target_name_override'] = url.hostname;
    }
  }
  if (url) {
    // http: plain gRPC, no credentials (the emulator's way); https: TLS and real credentials.
    settings.emulatorMode = emulator;
    // Naming the universe spares the client asking for one: without it, it looks for Google's
    // metadata server (169.254.169.254) before its first call, even with an emulator.
    if (emulator) settings.universeDomain = 'googleapis.com';
  }
  if (config.credentials !== undefined) {
    // A service-account client of our own: google-auth-library 11 deprecates (and warns on every
    // client made with) the `credentials` option it would otherwise build this from.
    settings.authClient = new (auth().JWT)({
      email: config.credentials.clientEmail,
      key: config.credentials.privateKey,
      scopes: pubsubScopes(),
    });
  }
  return settings;
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`no answer from Pub/Sub within ${ms} ms`);
      error.name = 'TimeoutError';
      reject(error);
    }, ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
