import type * as EventBridgeSdk from '@aws-sdk/client-eventbridge';
import { lazily } from './lazy-sdk';
import { classifyAwsError } from './aws-errors';
import {
  AttemptRejected,
  awsClientSettings,
  checkBeforeSend,
  classifyWith,
  ClientCache,
  clientKey,
  CloudAdapterOptions,
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
import { EventBridgeConfig, parseDestinationConfig } from './destination-config';

/** The SDK, loaded on the first delivery of this kind (see lazily). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = lazily((): typeof EventBridgeSdk => require('@aws-sdk/client-eventbridge'));

/**
 * Delivers to an EventBridge bus: PutEvents with one entry, `Source` from the config (`hookbase`
 * by default), `DetailType` the event type, `Detail` the payload's JSON. PutEvents answers 200
 * even when the entry was refused: a `FailedEntryCount` above 0 is a failed attempt, retried or
 * failed for good by the entry's `ErrorCode`, never a success.
 */
export class EventBridgeDestinationAdapter implements DestinationAdapter {
  readonly kind = 'eventbridge' as const;
  private readonly clients: ClientCache<EventBridgeSdk.EventBridgeClient>;

  constructor(private readonly options: CloudAdapterOptions) {
    this.clients = new ClientCache((client) => client.destroy(), options.maxClients);
  }

  async deliver(message: OutboundMessage, target: DeliveryTarget): Promise<DeliveryReport> {
    let config: EventBridgeConfig;
    try {
      config = parseDestinationConfig('eventbridge', target.config);
      checkBeforeSend(this.kind, config, target, this.options);
    } catch (error) {
      return refusedReport(error);
    }
    const client = this.client(config);
    const command = new (sdk().PutEventsCommand)({
      Entries: [
        {
          EventBusName: config.eventBusName,
          Source: config.source,
          DetailType: message.eventType,
          Detail: payloadBody(message.payload),
        },
      ],
    });
    return timedAttempt(async () => {
      const output = await client.send(command, {
        abortSignal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const status = outputStatus(output);
      const entry = output.Entries?.[0];
      if ((output.FailedEntryCount ?? 0) > 0 || !entry?.EventId) {
        const code = entry?.ErrorCode ?? 'FailedEntry';
        const refused = classifyAwsError({
          name: code,
          message: entry?.ErrorMessage ?? 'the entry was not accepted',
        });
        throw new AttemptRejected({ ...refused, status });
      }
      return { status, excerpt: JSON.stringify({ EventId: entry.EventId }) };
    }, classifyWith(classifyAwsError));
  }

  private client(config: EventBridgeConfig): EventBridgeSdk.EventBridgeClient {
    const key = clientKey(['eventbridge', config.region, config.endpoint, config.credentials]);
    return this.clients.get(
      key,
      () => new (sdk().EventBridgeClient)(awsClientSettings(config, this.options)),
    );
  }

  async close(): Promise<void> {
    await this.clients.close();
  }
}
