import type * as SqsSdk from '@aws-sdk/client-sqs';
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
import { parseDestinationConfig, SqsConfig } from './destination-config';

/** The SDK, loaded on the first delivery of this kind (see lazily). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = lazily((): typeof SqsSdk => require('@aws-sdk/client-sqs'));

/**
 * Delivers to an SQS queue: SendMessage with the payload's JSON as the body and the delivery
 * attributes as String message attributes. On a FIFO queue (URL ending in `.fifo`) the message
 * group is the endpoint id (one ordered stream per endpoint) and the deduplication id the
 * webhook id (stable across retries: SQS drops a resend within its 5-minute window).
 */
export class SqsDestinationAdapter implements DestinationAdapter {
  readonly kind = 'sqs' as const;
  private readonly clients: ClientCache<SqsSdk.SQSClient>;

  constructor(private readonly options: CloudAdapterOptions) {
    this.clients = new ClientCache((client) => client.destroy(), options.maxClients);
  }

  async deliver(message: OutboundMessage, target: DeliveryTarget): Promise<DeliveryReport> {
    let config: SqsConfig;
    try {
      config = parseDestinationConfig('sqs', target.config);
      checkBeforeSend(this.kind, config, target, this.options);
    } catch (error) {
      return refusedReport(error);
    }
    const client = this.client(config);
    const fifo = config.queueUrl.endsWith('.fifo');
    const command = new (sdk().SendMessageCommand)({
      QueueUrl: config.queueUrl,
      MessageBody: payloadBody(message.payload),
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

  private client(config: SqsConfig): SqsSdk.SQSClient {
    const key = clientKey(['sqs', config.region, config.endpoint, config.credentials]);
    return this.clients.get(
      key,
      () =>
        new (sdk().SQSClient)({
          ...awsClientSettings(config, this.options),
          // The request goes to the regional endpoint or the configured override, never to
          // whatever host a queue URL names.
          useQueueUrlAsEndpoint: false,
        }),
    );
  }

  async close(): Promise<void> {
    await this.clients.close();
  }
}
