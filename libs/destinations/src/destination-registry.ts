import type { EndpointKind, ReceiverOptions, StoredReceiverOptions } from '@hookbase/domain';
import type { CloudAdapterOptions } from './cloud-support';
import type { DestinationAdapter } from './destination.adapter';
import { EndpointCredentials } from './endpoint-credentials';
import { EventBridgeDestinationAdapter } from './eventbridge.adapter';
import { HttpAdapterOptions, HttpDestinationAdapter } from './http.adapter';
import { PubsubDestinationAdapter } from './pubsub.adapter';
import { ReceiverOptionsSealer } from './receiver-options';
import { S3DestinationAdapter } from './s3.adapter';
import { SnsDestinationAdapter } from './sns.adapter';
import { SqsDestinationAdapter } from './sqs.adapter';

/** The endpoint as the registry needs it to open its config. */
export interface StoredDestination {
  organizationId: string;
  kind: EndpointKind;
  config: Record<string, unknown>;
}

/**
 * Where the dispatcher gets a destination from: the adapter for an endpoint's kind and the
 * endpoint's config with its stored credentials opened. The one seam between delivery and the
 * transports, so a unit test replaces every destination at once.
 */
export interface DestinationRegistry {
  /** The adapter serving `kind`, or undefined when none does. */
  adapterFor(kind: EndpointKind): DestinationAdapter | undefined;
  /**
   * The endpoint's config with its stored credentials decrypted. Throws (FEATURE_NOT_AVAILABLE,
   * or the cipher's error) when they cannot be opened with the configured keys.
   */
  openConfig(endpoint: StoredDestination): Record<string, unknown>;
  /**
   * An http endpoint's receiver options with their sealed parts opened. Throws like openConfig.
   */
  openReceiverOptions(organizationId: string, stored: StoredReceiverOptions): ReceiverOptions;
}

/** A destination adapter that holds connections to let go of at shutdown. */
export interface ClosableDestinationAdapter extends DestinationAdapter {
  close(): Promise<void>;
}

export interface DestinationAdaptersOptions {
  http: HttpAdapterOptions;
  cloud: CloudAdapterOptions;
  credentials: { key: string | undefined; previousKeys?: readonly string[] };
}

/** The process's adapters, one per kind, and its credentials cipher. */
export class DestinationAdapters implements DestinationRegistry {
  private readonly byKind: Map<EndpointKind, ClosableDestinationAdapter>;
  private readonly credentials: EndpointCredentials;
  private readonly receiverOptions: ReceiverOptionsSealer;

  constructor(
    options: DestinationAdaptersOptions,
    adapters: readonly ClosableDestinationAdapter[] = defaultAdapters(options),
  ) {
    this.byKind = new Map();
    for (const adapter of adapters) {
      // Two adapters for one kind is a wiring mistake: refuse it rather than let one win.
      if (this.byKind.has(adapter.kind)) {
        throw new Error(`two destination adapters for kind ${adapter.kind}`);
      }
      this.byKind.set(adapter.kind, adapter);
    }
    this.credentials = new EndpointCredentials(options.credentials);
    this.receiverOptions = new ReceiverOptionsSealer(options.credentials);
  }

  adapterFor(kind: EndpointKind): DestinationAdapter | undefined {
    return this.byKind.get(kind);
  }

  openConfig(endpoint: StoredDestination): Record<string, unknown> {
    return this.credentials.open(endpoint.organizationId, endpoint.kind, endpoint.config);
  }

  openReceiverOptions(organizationId: string, stored: StoredReceiverOptions): ReceiverOptions {
    return this.receiverOptions.open(organizationId, stored);
  }

  /** Closes every adapter; returns the errors of those that failed to close (none thrown). */
  async close(): Promise<Error[]> {
    const results = await Promise.allSettled([...this.byKind.values()].map((a) => a.close()));
    return results.flatMap((result) =>
      result.status === 'rejected'
        ? [result.reason instanceof Error ? result.reason : new Error(String(result.reason))]
        : [],
    );
  }
}

function defaultAdapters(options: DestinationAdaptersOptions): ClosableDestinationAdapter[] {
  return [
    new HttpDestinationAdapter(options.http),
    new SqsDestinationAdapter(options.cloud),
    new SnsDestinationAdapter(options.cloud),
    new EventBridgeDestinationAdapter(options.cloud),
    new PubsubDestinationAdapter(options.cloud),
    new S3DestinationAdapter(options.cloud),
  ];
}
