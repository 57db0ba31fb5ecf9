import {
  Body,
  Controller,
  Headers,
  HttpCode,
  Inject,
  Optional,
  Post,
  UseGuards,
} from '@nestjs/common';
import { context } from '@opentelemetry/api';
import { z } from 'zod';
import { anyObject, dataOf, DescribeRoute } from '@hookbase/web';
import { parseInput, publishEventParser, publishEventSchema } from '@hookbase/domain';
import { ApiKeyPrincipal, RequestLimits } from '@hookbase/auth';
import { IngestMetrics, METRICS, NO_METRICS } from '@hookbase/runtime';
import { ApiKeyGuard, AuthenticatedKey, CountsEvents, toHttpError } from '@hookbase/web';
import { countedBatch, countedPublish } from './ingest-counting';
import { PublishBatch } from './publish-batch.use-case';
import { PublishEvent } from './publish-event.use-case';
import { callerTraceContext } from './caller-trace';

type RequestHeaders = Record<string, string | string[] | undefined>;

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
    private readonly batch: PublishBatch,
    private readonly limits: RequestLimits,
    @Optional() @Inject(METRICS) private readonly metrics: IngestMetrics = NO_METRICS,
  ) {}

  @DescribeRoute({
    operationId: 'publishEvent',
    tag: 'Events',
    summary:
      'Publish one event. Answers once Kafka has it; an idempotency key seen before answers the first result.',
    security: 'apiKey',
    body: { name: 'PublishEvent', schema: publishEventSchema, required: true },
    success: { status: 202, description: 'Accepted', schema: dataOf() },
    errors: [
      'IDEMPOTENCY_CONFLICT',
      'EVENT_TYPE_UNKNOWN',
      'PAYLOAD_INVALID',
      'APPLICATION_NOT_FOUND',
    ],
    usesStore: true,
  })
  @Post()
  @HttpCode(202)
  async publish(
    @AuthenticatedKey() key: ApiKeyPrincipal,
    @Body() body: unknown,
    @Headers() headers: RequestHeaders,
  ) {
    return countedPublish(this.metrics, 'rest', async () => {
      await this.limits.takeIngest(key, 1);
      const input = parseInput(publishEventParser, body);
      // The publish continues the caller's trace when the request carries a `traceparent`.
      const published = await context.with(callerTraceContext(headers), () =>
        this.publishEvent.execute(key.organizationId, input),
      );
      return { data: published };
    });
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
  async publishBatch(
    @AuthenticatedKey() key: ApiKeyPrincipal,
    @Body() body: unknown,
    @Headers() headers: RequestHeaders,
  ) {
    const events = (body as { events?: unknown } | null)?.events;
    const outcomes = await countedBatch(this.metrics, 'batch', events, () =>
      context.with(callerTraceContext(headers), () =>
        this.batch.execute({
          key,
          events,
          toInput: (event: unknown) => parseInput(publishEventParser, event),
          sizeHint: (max) => `Send { "events": [...] } with 1 to ${max} events`,
        }),
      ),
    );
    const results = outcomes.map((outcome) => {
      if (outcome.kind === 'published') return { status: 202, data: outcome.event };
      const mapped = toHttpError(outcome.error);
      return { status: mapped.status, ...mapped.body };
    });
    return { data: results };
  }
}
