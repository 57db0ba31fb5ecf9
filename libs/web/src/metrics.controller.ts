import { Controller, Get, Inject, Optional, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError } from '@hookbase/domain';
import { HookbaseMetrics, METRICS_OFF_MESSAGE } from '@hookbase/runtime';
import { DescribeRoute } from './openapi/route-description';

/**
 * Prometheus scrapes this process's metrics here (workers without HTTP: on HOOKBASE_OPS_PORT);
 * 404 when HOOKBASE_METRICS=false.
 */
@Controller('metrics')
export class MetricsController {
  constructor(
    // Null when HOOKBASE_METRICS=false.
    @Optional() @Inject(HookbaseMetrics) private readonly metrics: HookbaseMetrics | null,
  ) {}

  @DescribeRoute({
    operationId: 'metrics',
    tag: 'Operations',
    summary:
      "This process's metrics in the Prometheus text format (`hookbase_*`, and Node's process metrics).",
    security: 'none',
    success: {
      status: 200,
      description: 'Prometheus text exposition',
      schema: { type: 'string' },
      contentType: 'text/plain',
    },
    errors: ['ROUTE_NOT_FOUND'],
    usesStore: false,
  })
  @Get()
  async scrape(@Res() reply: FastifyReply): Promise<void> {
    if (!this.metrics) throw new DomainError('ROUTE_NOT_FOUND', METRICS_OFF_MESSAGE);
    const { contentType, text } = await this.metrics.scrape();
    await reply.header('content-type', contentType).send(text);
  }
}
