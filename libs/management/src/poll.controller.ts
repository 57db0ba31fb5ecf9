import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { DescribeRoute, pollPageBody } from '@hookbase/web';
import { HOOKBASE_CONFIG, pollCursorKeys, type HookbaseConfig } from '@hookbase/config';
import {
  decodePollCursor,
  DomainError,
  encodePollCursor,
  nextPollSequence,
  parseInput,
  pollQuerySchema,
  pollServes,
  type PollCursorKeys,
} from '@hookbase/domain';
import { EndpointRepository, PolledMessage, PollLogRepository } from '@hookbase/persistence';
import { ApiKeyGuard, OrganizationId, PortalRoute } from '@hookbase/web';
import { PortalScopeGuard } from './portal-scope.guard';

/**
 * `GET …/webhook-endpoints/:endpointId/poll` (ADR 0011): a polling endpoint's consumer reads its
 * log from a cursor, in acceptance order, and passes `nextCursor` back to move on. Moving past a
 * message acknowledges it (`pending` → `succeeded` in the message log). A portal token polls its
 * application's polling endpoints, unless it is read-only: acknowledging is a change.
 */
@Controller('api/organizations/:orgId/webhook-endpoints')
@UseGuards(ApiKeyGuard, PortalScopeGuard)
export class PollController {
  private readonly cursorKeys: PollCursorKeys;

  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly pollLog: PollLogRepository,
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
  ) {
    const keys = pollCursorKeys(config);
    if (!keys || keys.length === 0) {
      // Boot stops here: the services that serve polls require an admin token or a credentials key.
      throw new Error('poll cursors need HOOKBASE_CREDENTIALS_KEY or HOOKBASE_ADMIN_TOKEN');
    }
    this.cursorKeys = keys as unknown as PollCursorKeys;
  }

  @DescribeRoute({
    operationId: 'pollEndpoint',
    tag: 'Endpoints',
    summary:
      "A polling endpoint's next messages after `cursor`, in acceptance order, and the cursor to pass next. Polling past a message acknowledges it (`succeeded`); a paused or disabled endpoint answers an empty page.",
    security: 'apiKey',
    query: { name: 'PollQuery', schema: pollQuerySchema },
    success: { status: 200, description: 'The next messages', schema: pollPageBody },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'ENDPOINT_NOT_FOUND',
      'ENDPOINT_NOT_POLLING',
      'VALIDATION_FAILED',
    ],
    usesStore: true,
  })
  @Get(':endpointId/poll')
  @PortalRoute({ readChanges: true })
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
    const after = decodePollCursor(this.cursorKeys, endpoint.id, cursor);
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
      data: messages.map((message) => polledMessageView(this.cursorKeys, endpoint.id, message)),
      nextCursor: encodePollCursor(this.cursorKeys, endpoint.id, next),
    };
  }
}

function polledMessageView(keys: PollCursorKeys, endpointId: string, message: PolledMessage) {
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
    cursor: encodePollCursor(keys, endpointId, message.sequence),
  };
}
