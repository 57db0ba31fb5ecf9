import { Body, Controller, HttpCode, Inject, Post, UseGuards } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DomainError, parseInput, publishEventSchema } from '@hookbase/domain';
import { ApiKeyGuard, OrganizationId, toHttpError } from '@hookbase/web';
import { PublishEvent } from './publish-event.use-case';

@Controller('v1/events')
@UseGuards(ApiKeyGuard)
export class EventsController {
  constructor(
    private readonly publishEvent: PublishEvent,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {}

  @Post()
  @HttpCode(202)
  async publish(@OrganizationId() organizationId: string, @Body() body: unknown) {
    const input = parseInput(publishEventSchema, body);
    return { data: await this.publishEvent.execute(organizationId, input) };
  }

  /** Each event is accepted or refused on its own; results come back in the order sent. */
  @Post('batch')
  @HttpCode(207)
  async publishBatch(@OrganizationId() organizationId: string, @Body() body: unknown) {
    const events = (body as { events?: unknown } | null)?.events;
    const max = this.config.http.maxBatchEvents;
    if (!Array.isArray(events) || events.length === 0 || events.length > max) {
      throw new DomainError(
        'VALIDATION_FAILED',
        `Send { "events": [...] } with 1 to ${max} events`,
      );
    }
    const results = await Promise.all(
      events.map(async (event) => {
        try {
          const input = parseInput(publishEventSchema, event);
          return { status: 202, data: await this.publishEvent.execute(organizationId, input) };
        } catch (error) {
          const mapped = toHttpError(error);
          return { status: mapped.status, ...mapped.body };
        }
      }),
    );
    return { data: results };
  }
}
