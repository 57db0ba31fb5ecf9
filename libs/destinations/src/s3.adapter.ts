import type * as S3Sdk from '@aws-sdk/client-s3';
import { lazily } from './lazy-sdk';
import { classifyAwsError } from './aws-errors';
import {
  awsClientSettings,
  checkBeforeSend,
  ClientCache,
  clientKey,
  CloudAdapterOptions,
  deliveryAttributes,
  outputStatus,
  refusedReport,
  timedAttempt,
} from './cloud-support';
import {
  DeliveryReport,
  DeliveryTarget,
  DestinationAdapter,
  OutboundMessage,
  payloadBody,
} from './destination.adapter';
import { parseDestinationConfig, S3Config } from './destination-config';

/** The SDK, loaded on the first delivery of this kind (see lazily). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = lazily((): typeof S3Sdk => require('@aws-sdk/client-s3'));

/**
 * The object key of a message: `<prefix><eventType>/<messageId>.json`. A retry writes the same
 * key again (same content); a replay is a new message and so a new object, whose `webhook-id`
 * metadata names the original.
 */
export function s3ObjectKey(prefix: string, message: OutboundMessage): string {
  return `${prefix}${message.eventType}/${message.messageId}.json`;
}

/**
 * Delivers to an S3 bucket: one PutObject per message, the payload's JSON as the body, content
 * type application/json, the delivery attributes as user metadata (x-amz-meta-*). With an
 * endpoint override (emulators, S3-compatible stores) requests are path-style.
 */
export class S3DestinationAdapter implements DestinationAdapter {
  readonly kind = 's3' as const;
  private readonly clients: ClientCache<S3Sdk.S3Client>;

  constructor(private readonly options: CloudAdapterOptions) {
    this.clients = new ClientCache((client) => client.destroy(), options.maxClients);
  }

  async deliver(message: OutboundMessage, target: DeliveryTarget): Promise<DeliveryReport> {
    let config: S3Config;
    try {
      config = parseDestinationConfig('s3', target.config);
      checkBeforeSend(this.kind, config, target, this.options);
    } catch (error) {
      return refusedReport(error);
    }
    const client = this.client(config);
    const key = s3ObjectKey(config.prefix, message);
    const command = new (sdk().PutObjectCommand)({
      Bucket: config.bucket,
      Key: key,
      Body: payloadBody(message.payload),
      ContentType: 'application/json',
      Metadata: deliveryAttributes(message),
      ...(config.expectedBucketOwner !== undefined
        ? { ExpectedBucketOwner: config.expectedBucketOwner }
        : {}),
    });
    return timedAttempt(async () => {
      const output = await client.send(command, {
        abortSignal: AbortSignal.timeout(this.options.timeoutMs),
      });
      return {
        status: outputStatus(output),
        excerpt: JSON.stringify({ Key: key, ETag: output.ETag }),
      };
    }, classifyAwsError);
  }

  private client(config: S3Config): S3Sdk.S3Client {
    const key = clientKey(['s3', config.region, config.endpoint, config.credentials]);
    return this.clients.get(
      key,
      () =>
        new (sdk().S3Client)({
          ...awsClientSettings(config, this.options),
          forcePathStyle: config.endpoint !== undefined,
        }),
    );
  }

  async close(): Promise<void> {
    await this.clients.close();
  }
}
