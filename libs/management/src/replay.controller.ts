import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { dataOf, DescribeRoute } from '@hookbase/web';
import { parseInput, replayFailedSchema } from '@hookbase/domain';
import { ApiKeyGuard, OrganizationId, PortalRoute } from '@hookbase/web';
import { PortalScopeGuard } from './portal-scope.guard';
import { ReplayService } from './replay.service';
import { messageView } from './views';

/**
 * Sending again what failed: each answer is the copy (or the count of copies) now queued. Every
 * route here is application-scoped: a portal token replays its application's messages.
 */
@Controller('api/organizations/:orgId')
@UseGuards(ApiKeyGuard, PortalScopeGuard)
@PortalRoute()
export class ReplayController {
  constructor(private readonly replays: ReplayService) {}

  @DescribeRoute({
    operationId: 'replayMessage',
    tag: 'Replays',
    summary: 'Send a copy of a message at once (`replayOf` names the original).',
    security: 'apiKey',
    success: { status: 202, description: 'The copy', schema: dataOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'MESSAGE_NOT_FOUND', 'ENDPOINT_NOT_FOUND', 'PAYLOAD_PURGED'],
    usesStore: true,
  })
  @Post('messages/:messageId/replay')
  @HttpCode(202)
  async replay(@OrganizationId() organizationId: string, @Param('messageId') messageId: string) {
    return { data: messageView(await this.replays.replayMessage(organizationId, messageId)) };
  }

  @DescribeRoute({
    operationId: 'replayFailedMessages',
    tag: 'Replays',
    summary:
      "Send again, as copies, the endpoint's failed messages in id order (created in `[since, until)` and of `eventTypes`, wildcards allowed, when given): at most HOOKBASE_REPLAY_FAILED_MAX_PER_CALL per call and HOOKBASE_REPLAY_FAILED_PER_MINUTE per organization and minute; pass `nextAfter` back as `after` to go on.",
    security: 'apiKey',
    body: { name: 'ReplayFailed', schema: replayFailedSchema, required: false },
    success: {
      status: 202,
      description: 'How many copies were queued, and where to go on',
      schema: dataOf({
        type: 'object',
        required: ['replayed', 'nextAfter'],
        properties: {
          replayed: { type: 'integer' },
          nextAfter: {
            type: ['string', 'null'],
            description:
              'Set when more failed messages may follow: send it as `after` in the next call.',
          },
        },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  })
  @Post('webhook-endpoints/:endpointId/replay-failed')
  @HttpCode(202)
  async replayFailed(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
  ) {
    const { since, until, eventTypes, after } = parseInput(replayFailedSchema, body ?? {});
    return {
      data: await this.replays.replayFailed(organizationId, endpointId, {
        since: since ? new Date(since) : undefined,
        until: until ? new Date(until) : undefined,
        eventTypes,
        after,
      }),
    };
  }

  @DescribeRoute({
    operationId: 'retryDlqEntry',
    tag: 'DLQ',
    summary: 'Send a copy of a dead-lettered message at once.',
    security: 'apiKey',
    success: { status: 202, description: 'The copy', schema: dataOf() },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'DLQ_ENTRY_NOT_FOUND',
      'MESSAGE_NOT_FOUND',
      'ENDPOINT_NOT_FOUND',
      'PAYLOAD_PURGED',
    ],
    usesStore: true,
  })
  @Post('dlq/:dlqId/retry')
  @HttpCode(202)
  async retry(@OrganizationId() organizationId: string, @Param('dlqId') dlqId: string) {
    return { data: messageView(await this.replays.retryDlqEntry(organizationId, dlqId)) };
  }
}
