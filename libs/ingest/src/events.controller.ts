import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { DomainError, parseInput, publishEventSchema } from '@hookbase/domain';
import { ApiKeyGuard, OrganizationId, toHttpError } from '@hookbase/web';
import { PublishEvent } from './publish-event.use-case';

export const MAX_BATCH_EVENTS = 500;

@Controller('v1/events')
@UseGuards(ApiKeyGuard)
export class EventsController {
  constructor(private readonly publishEvent: PublishEvent) {}

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
    if (!Array.isArray(events) || events.length === 0 || events.length > MAX_BATCH_EVENTS) {
      throw new DomainError(
        'VALIDATION_FAILED',
        `Send { "events": [...] } with 1 to ${MAX_BATCH_EVENTS} events`,
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
