import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { parseInput, replayFailedSchema } from '@hookbase/domain';
import { ApiKeyGuard, OrganizationId } from '@hookbase/web';
import { ReplayService } from './replay.service';
import { messageView } from './views';

/** Sending again what failed: each answer is the copy (or the count of copies) now queued. */
@Controller('api/organizations/:orgId')
@UseGuards(ApiKeyGuard)
export class ReplayController {
  constructor(private readonly replays: ReplayService) {}

  @Post('messages/:messageId/replay')
  @HttpCode(202)
  async replay(@OrganizationId() organizationId: string, @Param('messageId') messageId: string) {
    return { data: messageView(await this.replays.replayMessage(organizationId, messageId)) };
  }

  @Post('webhook-endpoints/:endpointId/replay-failed')
  @HttpCode(202)
  async replayFailed(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
  ) {
    const { since, after } = parseInput(replayFailedSchema, body ?? {});
    return {
      data: await this.replays.replayFailed(organizationId, endpointId, {
        since: since ? new Date(since) : undefined,
        after,
      }),
    };
  }

  @Post('dlq/:dlqId/retry')
  @HttpCode(202)
  async retry(@OrganizationId() organizationId: string, @Param('dlqId') dlqId: string) {
    return { data: messageView(await this.replays.retryDlqEntry(organizationId, dlqId)) };
  }
}
