import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { listQuerySchema, parseInput } from '@hookbase/domain';
import { DescribeRoute, pageOf } from '@hookbase/web';
import { InvalidEventEntity, InvalidEventRepository } from '@hookbase/persistence';
import { AdminGuard } from '@hookbase/web';

function invalidEventView(row: InvalidEventEntity) {
  return {
    id: row.id,
    reason: row.reason,
    topic: row.topic,
    partition: row.partition,
    offset: row.offset,
    key: row.recordKey,
    valueExcerpt: row.valueExcerpt,
    receivedAt: row.receivedAt.toISOString(),
  };
}

/**
 * Records written straight to the events topic that could not be accepted (not JSON, not the
 * envelope's schema, unknown organization): newest first, with their count. Admin only, since
 * such a record may belong to no organization.
 */
@Controller('api/invalid-events')
@UseGuards(AdminGuard)
export class InvalidEventsController {
  constructor(private readonly invalid: InvalidEventRepository) {}

  @DescribeRoute({
    operationId: 'listInvalidEvents',
    tag: 'Operations',
    summary: 'Records on the events topic that could not be accepted, newest first (admin).',
    security: 'admin',
    query: { name: 'ListQuery', schema: listQuerySchema },
    success: {
      status: 200,
      description: 'A page of invalid records with their total count',
      schema: pageOf({ total: { type: 'integer' } }),
    },
    errors: ['VALIDATION_FAILED'],
    usesStore: true,
  })
  @Get()
  async list(@Query() query: unknown) {
    const { limit, cursor } = parseInput(listQuerySchema, query);
    const [page, total] = await Promise.all([
      this.invalid.list({ limit, cursor }),
      this.invalid.count(),
    ]);
    return { data: page.items.map(invalidEventView), nextCursor: page.nextCursor, total };
  }
}
