import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { parseInput, publishEventSchema } from '@hookbase/domain';
import { ApiKeyPrincipal, RequestLimits } from '@hookbase/auth';
import { ApiKeyGuard, AuthenticatedKey, CountsEvents, toHttpError } from '@hookbase/web';
import { PublishBatch } from './publish-batch.use-case';
import { PublishEvent } from './publish-event.use-case';

/** Ingest: each request takes its events from the key's ingest budget (a batch all of them). */
@Controller('v1/events')
@UseGuards(ApiKeyGuard)
@CountsEvents()
export class EventsController {
  constructor(
    private readonly publishEvent: PublishEvent,
    private readonly batch: PublishBatch,
    private readonly limits: RequestLimits,
  ) {}

  @Post()
  @HttpCode(202)
  async publish(@AuthenticatedKey() key: ApiKeyPrincipal, @Body() body: unknown) {
    await this.limits.takeIngest(key, 1);
    const input = parseInput(publishEventSchema, body);
    return { data: await this.publishEvent.execute(key.organizationId, input) };
  }

  /** Each event is accepted or refused on its own; results come back in the order sent. */
  @Post('batch')
  @HttpCode(207)
  async publishBatch(@AuthenticatedKey() key: ApiKeyPrincipal, @Body() body: unknown) {
    const outcomes = await this.batch.execute({
      key,
      events: (body as { events?: unknown } | null)?.events,
      toInput: (event: unknown) => parseInput(publishEventSchema, event),
      sizeHint: (max) => `Send { "events": [...] } with 1 to ${max} events`,
    });
    const results = outcomes.map((outcome) => {
      if (outcome.kind === 'published') return { status: 202, data: outcome.event };
      const mapped = toHttpError(outcome.error);
      return { status: mapped.status, ...mapped.body };
    });
    return { data: results };
  }
}
