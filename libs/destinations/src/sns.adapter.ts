import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
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
} from './destination.adapter';
import { parseDestinationConfig, SnsConfig } from './destination-config';

/**
 * Delivers to an SNS topic: Publish with the payload's JSON as the message and the delivery
 * attributes as String message attributes. On a FIFO topic (ARN ending in `.fifo`) the message
 * group is the endpoint id and the deduplication id the webhook id, as for SQS.
 */
export class SnsDestinationAdapter implements DestinationAdapter {
  readonly kind = 'sns' as const;
  private readonly clients: ClientCache<SNSClient>;

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
    const command = new PublishCommand({
      TopicArn: config.topicArn,
      Message: JSON.stringify(message.payload),
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

  private client(config: SnsConfig): SNSClient {
    const key = clientKey(['sns', config.region, config.endpoint, config.credentials]);
    return this.clients.get(key, () => new SNSClient(awsClientSettings(config, this.options)));
  }

  async close(): Promise<void> {
    await this.clients.close();
  }
}
