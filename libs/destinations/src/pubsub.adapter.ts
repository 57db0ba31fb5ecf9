import { PubSub, type ClientConfig, type Topic } from '@google-cloud/pubsub';
import {
  checkEndpointOverride,
  ClientCache,
  clientKey,
  CloudAdapterOptions,
  deliveryAttributes,
  refusedReport,
  timedAttempt,
} from './cloud-support';
import {
  DeliveryReport,
  DeliveryTarget,
  DestinationAdapter,
  OutboundMessage,
} from './destination.adapter';
import { parseDestinationConfig, PubsubConfig } from './destination-config';
import { classifyGoogleError } from './google-errors';

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
 * `http://host:port`, a private endpoint over TLS when it is `https://...`.
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
      checkEndpointOverride(config.endpoint, this.options.allowPrivateTargets);
    } catch (error) {
      return refusedReport(error);
    }
    const ordered = target.ordered === true;
    const topic = this.topic(config, ordered);
    const orderingKey = ordered ? target.endpointId : undefined;
    return timedAttempt(async () => {
      try {
        const id = await withDeadline(
          topic.publishMessage({
            data: Buffer.from(JSON.stringify(message.payload)),
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

  private topic(config: PubsubConfig, ordered: boolean): Topic {
    const key = clientKey(['pubsub', config.projectId, config.endpoint, config.credentials]);
    const client = this.clients.get(key, () => ({
      pubsub: new PubSub(pubsubClientConfig(config)),
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

export function pubsubClientConfig(config: PubsubConfig): ClientConfig {
  const settings: ClientConfig = { projectId: config.projectId };
  if (config.endpoint !== undefined) {
    const url = new URL(config.endpoint);
    const emulator = url.protocol === 'http:';
    const port = url.port || (emulator ? '80' : '443');
    settings.apiEndpoint = `${url.hostname}:${port}`;
    // http: plain gRPC, no credentials (the emulator's way); https: TLS and real credentials.
    settings.emulatorMode = emulator;
    // Naming the universe spares the client asking for one: without it, it looks for Google's
    // metadata server (169.254.169.254) before its first call, even with an emulator.
    if (emulator) settings.universeDomain = 'googleapis.com';
  }
  if (config.credentials !== undefined) {
    settings.credentials = {
      client_email: config.credentials.clientEmail,
      private_key: config.credentials.privateKey,
    };
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
