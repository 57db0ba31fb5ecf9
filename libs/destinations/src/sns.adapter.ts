import type * as SnsSdk from '@aws-sdk/client-sns';
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
  stringAttributes,
  timedAttempt,
} from './cloud-support';
import {
  DeliveryReport,
  DeliveryTarget,
  DestinationAdapter,
  OutboundMessage,
  payloadBody,
} from './destination.adapter';
import { parseDestinationConfig, SnsConfig } from './destination-config';

/** The SDK, loaded on the first delivery of this kind (see lazily). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = lazily((): typeof SnsSdk => require('@aws-sdk/client-sns'));

/**
 * Delivers to an SNS topic: Publish with the payload's JSON as the message and the delivery
 * attributes as String message attributes. On a FIFO topic (ARN ending in `.fifo`) the message
 * group is the endpoint id and the deduplication id the webhook id, as for SQS.
 */
export class SnsDestinationAdapter implements DestinationAdapter {
  readonly kind = 'sns' as const;
  private readonly clients: ClientCache<SnsSdk.SNSClient>;

  constructor(private readonly options: CloudAdapterOptions) {
    this.clients = new ClientCache((client) => client.destroy(), options.maxClients);
  }

  async deliver(message: OutboundMessage, target: DeliveryTarget): Promise<DeliveryReport> {
    let config: SnsConfig;
    try {
      config = parseDestinationConfig('sns', target.config);
      checkBeforeSend(this.kind, config, target, this.options);
    } catch (error) {
      return refusedReport(error);
    }
    const client = this.client(config);
    const fifo = config.topicArn.endsWith('.fifo');
    const command = new (sdk().PublishCommand)({
      TopicArn: config.topicArn,
      Message: payloadBody(message.payload),
      MessageAttributes: stringAttributes(deliveryAttributes(message)),
      ...(fifo
        ? { MessageGroupId: target.endpointId, MessageDeduplicationId: message.webhookId }
        : {}),
    });
    return timedAttempt(async () => {
      const output = await client.send(command, {
        abortSignal: AbortSignal.timeout(this.options.timeoutMs),
      });
      return {
        status: outputStatus(output),
        excerpt: JSON.stringify({
          MessageId: output.MessageId,
          ...(output.SequenceNumber ? { SequenceNumber: output.SequenceNumber } : {}),
        }),
      };
    }, classifyAwsError);
  }

  private client(config: SnsConfig): SnsSdk.SNSClient {
    const key = clientKey(['sns', config.region, config.endpoint, config.credentials]);
    return this.clients.get(
      key,
      () => new (sdk().SNSClient)(awsClientSettings(config, this.options)),
    );
  }

  async close(): Promise<void> {
    await this.clients.close();
  }
}
