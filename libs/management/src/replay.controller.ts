import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { dataOf, DescribeRoute } from '@hookbase/web';
import { parseInput, replayFailedSchema } from '@hookbase/domain';
import { ApiKeyGuard, OrganizationId, PortalRoute } from '@hookbase/web';
import { PortalScopeGuard } from './portal-scope.guard';
import { ReplayFailedOptions, ReplayService } from './replay.service';
import { messageView } from './views';

const replayFailedBody = dataOf({
  type: 'object',
  required: ['replayed', 'nextAfter'],
  properties: {
    replayed: { type: 'integer' },
    nextAfter: {
      type: ['string', 'null'],
      description: 'Set when more failed messages may follow: send it as `after` in the next call.',
    },
  },
});

/** A replay-failed body (absent: everything that failed), as the service takes it. */
function replayFailedOptions(body: unknown): ReplayFailedOptions {
  const { since, until, eventTypes, after } = parseInput(replayFailedSchema, body ?? {});
  return {
    since: since ? new Date(since) : undefined,
    until: until ? new Date(until) : undefined,
    eventTypes,
    after,
  };
}

/**
 * Sending again what failed: each answer is the copy (or the count of copies) now queued. Every
 * route here is application-scoped: a portal token replays its application's messages (and
 * replay-failed across its application, named by id or uid).
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
      schema: replayFailedBody,
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
    return {
      data: await this.replays.replayFailed(organizationId, endpointId, replayFailedOptions(body)),
    };
  }

  @DescribeRoute({
    operationId: 'replayApplicationFailedMessages',
    tag: 'Replays',
    summary:
      "Replay-failed across an application's endpoints (id or uid): their failed messages in one id order, with the same filters, limits and `nextAfter` as for one endpoint.",
    security: 'apiKey',
    body: { name: 'ReplayFailed', schema: replayFailedSchema, required: false },
    success: {
      status: 202,
      description: 'How many copies were queued, and where to go on',
      schema: replayFailedBody,
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Post('applications/:appId/replay-failed')
  @HttpCode(202)
  async replayApplicationFailed(
    @OrganizationId() organizationId: string,
    @Param('appId') appId: string,
    @Body() body: unknown,
  ) {
    return {
      data: await this.replays.replayFailedOfApplication(
        organizationId,
        appId,
        replayFailedOptions(body),
      ),
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
