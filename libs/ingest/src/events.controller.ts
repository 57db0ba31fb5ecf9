import { Body, Controller, HttpCode, Inject, Post, UseGuards } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DomainError, parseInput, publishEventSchema } from '@hookbase/domain';
import { ApiKeyPrincipal, RequestLimits } from '@hookbase/auth';
import { ApiKeyGuard, AuthenticatedKey, CountsEvents, toHttpError } from '@hookbase/web';
import { PublishEvent } from './publish-event.use-case';

/** Ingest: each request takes its events from the key's ingest budget (a batch all of them). */
@Controller('v1/events')
@UseGuards(ApiKeyGuard)
@CountsEvents()
export class EventsController {
  constructor(
    private readonly publishEvent: PublishEvent,
    private readonly limits: RequestLimits,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
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
    const organizationId = key.organizationId;
    const events = (body as { events?: unknown } | null)?.events;
    const max = this.config.http.maxBatchEvents;
    if (!Array.isArray(events) || events.length === 0 || events.length > max) {
      throw new DomainError(
        'VALIDATION_FAILED',
        `Send { "events": [...] } with 1 to ${max} events`,
      );
    }
    await this.limits.takeIngest(key, events.length);
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
