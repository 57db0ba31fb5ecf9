import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
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
} from './destination.adapter';
import { parseDestinationConfig, S3Config } from './destination-config';

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
  private readonly clients: ClientCache<S3Client>;

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
    const command = new PutObjectCommand({
      Bucket: config.bucket,
      Key: key,
      Body: JSON.stringify(message.payload),
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

  private client(config: S3Config): S3Client {
    const key = clientKey(['s3', config.region, config.endpoint, config.credentials]);
    return this.clients.get(
      key,
      () =>
        new S3Client({
          ...awsClientSettings(config, this.options),
          forcePathStyle: config.endpoint !== undefined,
        }),
    );
  }

  async close(): Promise<void> {
    await this.clients.close();
  }
}
