import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import {
  decodePollCursor,
  DomainError,
  encodePollCursor,
  nextPollSequence,
  parseInput,
  pollQuerySchema,
  pollServes,
} from '@hookbase/domain';
import { EndpointRepository, PolledMessage, PollLogRepository } from '@hookbase/persistence';
import { ApiKeyGuard, OrganizationId } from '@hookbase/web';

/**
 * `GET …/webhook-endpoints/:endpointId/poll` (ADR 0011): a polling endpoint's consumer reads its
 * log from a cursor, in acceptance order, and passes `nextCursor` back to move on. Moving past a
 * message acknowledges it (`pending` → `succeeded` in the message log).
 */
@Controller('api/organizations/:orgId/webhook-endpoints')
@UseGuards(ApiKeyGuard)
export class PollController {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly pollLog: PollLogRepository,
  ) {}

  @Get(':endpointId/poll')
  async poll(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
    @Query() query: unknown,
  ) {
    const { cursor, limit } = parseInput(pollQuerySchema, query);
    const endpoint = await this.endpoints.findLive(organizationId, endpointId);
    if (!endpoint) throw new DomainError('ENDPOINT_NOT_FOUND', 'Endpoint not found');
    if (endpoint.kind !== 'polling') {
      throw new DomainError(
        'ENDPOINT_NOT_POLLING',
        `Endpoint ${endpoint.id} is of kind "${endpoint.kind}": Hookbase pushes its messages, only polling endpoints are polled`,
      );
    }
    const after = decodePollCursor(endpoint.id, cursor);
    const messages = await this.pollLog.poll(
      endpoint.id,
      after,
      limit,
      pollServes(endpoint.status),
    );
    const next = nextPollSequence(
      after,
      messages.map((m) => m.sequence),
    );
    return {
      data: messages.map((message) => polledMessageView(endpoint.id, message)),
      nextCursor: encodePollCursor(endpoint.id, next),
    };
  }
}

function polledMessageView(endpointId: string, message: PolledMessage) {
  return {
    messageId: message.messageId,
    webhookId: message.webhookId,
    replayOf: message.replayOf,
    eventId: message.eventId,
    eventType: message.eventType,
    payload: message.payload,
    acceptedAt: message.acceptedAt.toISOString(),
    createdAt: message.createdAt.toISOString(),
    sequence: message.sequence.toString(),
    cursor: encodePollCursor(endpointId, message.sequence),
  };
}
