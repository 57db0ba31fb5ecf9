import { Inject, Injectable } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DomainError } from '@hookbase/domain';
import {
  ApplicationRepository,
  DlqRepository,
  EndpointRepository,
  EventRepository,
  MessageEntity,
  MessageRepository,
} from '@hookbase/persistence';
import { RequestLimits } from '@hookbase/auth';

/** Which failed messages a replay-failed call copies. */
export interface ReplayFailedOptions {
  since?: Date;
  until?: Date;
  eventTypes?: readonly string[];
  after?: string;
}

/** What one replay-failed call did, and where the next one goes on when there is more. */
export interface ReplayFailedResult {
  replayed: number;
  /** The last original copied when more failed messages may follow (pass it as `after`), else null. */
  nextAfter: string | null;
}

/**
 * Replays and DLQ retries: each makes a copy of a message that is sent at once through the retry
 * schedule, outside any FIFO lane, keeping the original's webhook-id so receivers can deduplicate.
 */
@Injectable()
export class ReplayService {
  constructor(
    private readonly messages: MessageRepository,
    private readonly endpoints: EndpointRepository,
    private readonly dlq: DlqRepository,
    private readonly events: EventRepository,
    private readonly applications: ApplicationRepository,
    private readonly limits: RequestLimits,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {}

  async replayMessage(organizationId: string, messageId: string): Promise<MessageEntity> {
    const message = await this.messages.find(organizationId, messageId);
    if (!message) throw new DomainError('MESSAGE_NOT_FOUND', 'Message not found');
    return this.copyOne(organizationId, message);
  }

  /**
   * Copies the endpoint's failed messages, in id order, at most HOOKBASE_REPLAY_FAILED_MAX_PER_CALL
   * per call and what is left of the organization's HOOKBASE_REPLAY_FAILED_PER_MINUTE (429 when
   * nothing is). When more may follow, `nextAfter` names where the next call goes on.
   */
  async replayFailed(
    organizationId: string,
    endpointId: string,
    options: ReplayFailedOptions = {},
  ): Promise<ReplayFailedResult> {
    const endpoint = await this.endpoints.findLive(organizationId, endpointId);
    if (!endpoint) throw new DomainError('ENDPOINT_NOT_FOUND', 'Endpoint not found');
    return this.copyFailed(organizationId, [endpoint.id], options);
  }

  /**
   * As replayFailed, across the live endpoints of an application (id or uid), in one id order:
   * `nextAfter` goes on across all of them, and the same limits apply.
   */
  async replayFailedOfApplication(
    organizationId: string,
    applicationRef: string,
    options: ReplayFailedOptions = {},
  ): Promise<ReplayFailedResult> {
    const application = await this.applications.find(organizationId, applicationRef);
    if (!application) throw new DomainError('APPLICATION_NOT_FOUND', 'Application not found');
    const endpoints = await this.endpoints.liveOfApplication(organizationId, application.id);
    if (endpoints.length === 0) return { replayed: 0, nextAfter: null };
    return this.copyFailed(
      organizationId,
      endpoints.map((endpoint) => endpoint.id),
      options,
    );
  }

  private async copyFailed(
    organizationId: string,
    endpointIds: readonly string[],
    options: ReplayFailedOptions,
  ): Promise<ReplayFailedResult> {
    const granted = await this.limits.takeReplayFailed(
      organizationId,
      this.config.limits.replayFailed.maxPerCall,
    );
    let copied = 0;
    try {
      // One more than granted tells whether anything is left after this call.
      const failed = await this.messages.failedOfEndpoints(
        endpointIds,
        options.since,
        granted + 1,
        options.after,
        { until: options.until, eventTypes: options.eventTypes },
      );
      const batch = failed.slice(0, granted);
      // A message whose payload was purged has nothing left to send: it is passed over.
      const purged = await this.events.withPurgedPayload(batch);
      copied = (
        await this.messages.createCopies(
          organizationId,
          batch.filter((id) => !purged.has(id)),
        )
      ).length;
      const more = failed.length > granted;
      return { replayed: copied, nextAfter: more ? batch[batch.length - 1] : null };
    } finally {
      await this.limits.giveBackReplayFailed(organizationId, granted - copied);
    }
  }

  async retryDlqEntry(organizationId: string, dlqId: string): Promise<MessageEntity> {
    const entry = await this.dlq.find(organizationId, dlqId);
    if (!entry) throw new DomainError('DLQ_ENTRY_NOT_FOUND', 'DLQ entry not found');
    const message = await this.messages.find(organizationId, entry.messageId);
    if (!message)
      throw new DomainError('MESSAGE_NOT_FOUND', 'The message of this entry was pruned');
    const copy = await this.copyOne(organizationId, message);
    await this.dlq.markRetried(entry.id, copy.id);
    return copy;
  }

  private async copyOne(organizationId: string, message: MessageEntity): Promise<MessageEntity> {
    if ((await this.events.withPurgedPayload([message.id])).size > 0) {
      throw new DomainError(
        'PAYLOAD_PURGED',
        "This message's payload was purged: it cannot be sent again",
      );
    }
    const [copy] = await this.messages.createCopies(organizationId, [message.id]);
    if (!copy) {
      throw new DomainError('ENDPOINT_NOT_FOUND', 'The endpoint of this message has been deleted');
    }
    return copy;
  }
}
