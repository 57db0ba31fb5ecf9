import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DomainError, newId, type ReceiverOptions, type TestSendInput } from '@hookbase/domain';
import { HttpDestinationAdapter, ReceiverOptionsSealer } from '@hookbase/destinations';
import { EndpointEntity, EndpointRepository } from '@hookbase/persistence';

export const HOOKBASE_USER_AGENT = 'Hookbase/0.1 (+https://github.com/hookbase/hookbase)';

/** What a test send answers: the one attempt, nothing stored. */
export interface TestSendResult {
  webhookId: string;
  eventType: string;
  outcome: 'succeeded' | 'retry' | 'failed';
  responseStatus: number | null;
  durationMs: number;
  responseExcerpt: string | null;
  error: string | null;
}

/**
 * Sends one signed example message to an http endpoint now, with its headers, auth, timeout and
 * CA, outside every queue (never through a FIFO lane, never recorded in the log): the answer is the
 * attempt itself.
 */
@Injectable()
export class EndpointTestSendService implements OnApplicationShutdown {
  private readonly adapter: HttpDestinationAdapter;
  private readonly receiverOptions: ReceiverOptionsSealer;

  constructor(
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    private readonly endpoints: EndpointRepository,
  ) {
    this.adapter = new HttpDestinationAdapter({
      timeoutMs: config.delivery.timeoutMs,
      connectTimeoutMs: config.delivery.connectTimeoutMs,
      allowPrivateTargets: config.delivery.allowPrivateTargets,
      responseExcerptBytes: config.delivery.responseExcerptBytes,
      egressProxy: config.delivery.egressProxy,
      userAgent: HOOKBASE_USER_AGENT,
    });
    this.receiverOptions = new ReceiverOptionsSealer(config.credentials);
  }

  async send(endpoint: EndpointEntity, input: TestSendInput): Promise<TestSendResult> {
    if (endpoint.kind !== 'http') {
      throw new DomainError('FEATURE_NOT_AVAILABLE', 'Test sends are for http endpoints only');
    }
    const webhookId = newId('msg');
    const secrets = (await this.endpoints.signingSecrets([endpoint.id], new Date())).get(
      endpoint.id,
    );
    const base = { webhookId, eventType: input.eventType, responseStatus: null };
    if (!secrets || secrets.length === 0) {
      return {
        ...base,
        outcome: 'retry',
        durationMs: 0,
        responseExcerpt: null,
        error:
          'no signing secret can be opened: is HOOKBASE_CREDENTIALS_KEY the key they were sealed with?',
      };
    }
    let receiver: ReceiverOptions | null = null;
    try {
      receiver = endpoint.deliveryOptions
        ? this.receiverOptions.open(endpoint.organizationId, endpoint.deliveryOptions)
        : null;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        ...base,
        outcome: 'retry',
        durationMs: 0,
        responseExcerpt: null,
        error: `stored headers or auth: ${reason}`,
      };
    }
    const report = await this.adapter.deliver(
      {
        messageId: webhookId,
        webhookId,
        eventId: newId('evt'),
        eventType: input.eventType,
        payload: input.payload,
        attemptNumber: 1,
      },
      { endpointId: endpoint.id, kind: 'http', url: endpoint.url, config: {}, secrets, receiver },
    );
    const { outcome } = report;
    return {
      ...base,
      outcome: outcome.kind,
      responseStatus: outcome.status ?? null,
      durationMs: Math.round(report.durationMs),
      responseExcerpt: report.responseExcerpt,
      error: outcome.kind === 'succeeded' ? null : outcome.error,
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.adapter.close();
  }
}
