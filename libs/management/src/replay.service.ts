import { Injectable } from '@nestjs/common';
import { DomainError } from '@hookbase/domain';
import {
  DlqRepository,
  EndpointRepository,
  MessageEntity,
  MessageRepository,
} from '@hookbase/persistence';

/** How many failed messages one replay-failed call copies at most. */
export const MAX_REPLAY_FAILED = 10_000;

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
  ) {}

  async replayMessage(organizationId: string, messageId: string): Promise<MessageEntity> {
    const message = await this.messages.find(organizationId, messageId);
    if (!message) throw new DomainError('MESSAGE_NOT_FOUND', 'Message not found');
    return this.copyOne(organizationId, message);
  }

  async replayFailed(organizationId: string, endpointId: string, since?: Date): Promise<number> {
    const endpoint = await this.endpoints.findLive(organizationId, endpointId);
    if (!endpoint) throw new DomainError('ENDPOINT_NOT_FOUND', 'Endpoint not found');
    const failed = await this.messages.failedOfEndpoint(endpoint.id, since, MAX_REPLAY_FAILED);
    return (await this.messages.createCopies(organizationId, failed)).length;
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
    const [copy] = await this.messages.createCopies(organizationId, [message.id]);
    if (!copy) {
      throw new DomainError('ENDPOINT_NOT_FOUND', 'The endpoint of this message has been deleted');
    }
    return copy;
  }
}
