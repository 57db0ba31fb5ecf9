import { Body, Controller, HttpCode, Inject, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { anyObject, dataOf, DescribeRoute } from '@hookbase/web';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DomainError, parseInput, publishEventSchema } from '@hookbase/domain';
import {
  ApiKeyGuard,
  ApiKeyPrincipal,
  AuthenticatedKey,
  CountsEvents,
  RequestLimits,
  toHttpError,
} from '@hookbase/web';
import { PublishEvent } from './publish-event.use-case';

/** The batch body as the document states it; publishBatch checks its size itself. */
const publishBatchSchema = (max: number) =>
  z.object({ events: z.array(publishEventSchema).min(1).max(max) });

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

  @DescribeRoute({
    operationId: 'publishEvent',
    tag: 'Events',
    summary:
      'Publish one event. Answers once Kafka has it; an idempotency key seen before answers the first result.',
    security: 'apiKey',
    body: { name: 'PublishEvent', schema: publishEventSchema, required: true },
    success: { status: 202, description: 'Accepted', schema: dataOf() },
    errors: ['IDEMPOTENCY_CONFLICT'],
    usesStore: true,
  })
  @Post()
  @HttpCode(202)
  async publish(@AuthenticatedKey() key: ApiKeyPrincipal, @Body() body: unknown) {
    await this.limits.takeIngest(key, 1);
    const input = parseInput(publishEventSchema, body);
    return { data: await this.publishEvent.execute(key.organizationId, input) };
  }

  /** Each event is accepted or refused on its own; results come back in the order sent. */
  @DescribeRoute((limits) => ({
    operationId: 'publishEventBatch',
    tag: 'Events',
    summary: `Publish up to ${limits.maxBatchEvents} events (HOOKBASE_MAX_BATCH_EVENTS); each is accepted or refused on its own, results in the order sent.`,
    security: 'apiKey',
    body: {
      name: 'PublishEventBatch',
      schema: publishBatchSchema(limits.maxBatchEvents),
      required: true,
    },
    success: {
      status: 207,
      description:
        'One result per event: `{ status: 202, data }` or `{ status, error: { code, message, details? } }`',
      schema: dataOf({
        type: 'array',
        items: {
          type: 'object',
          required: ['status'],
          properties: { status: { type: 'integer' }, data: anyObject, error: anyObject },
        },
      }),
    },
    errors: [],
    usesStore: true,
  }))
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
