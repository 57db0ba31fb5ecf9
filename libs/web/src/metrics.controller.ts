import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HookbaseMetrics } from '@hookbase/runtime';
import { DescribeRoute } from './openapi/route-description';

/** Prometheus scrapes this process's metrics here (workers without HTTP: on HOOKBASE_OPS_PORT). */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: HookbaseMetrics) {}

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
    errors: [],
    usesStore: false,
  })
  @Get()
  async scrape(@Res() reply: FastifyReply): Promise<void> {
    const { contentType, text } = await this.metrics.scrape();
    await reply.header('content-type', contentType).send(text);
  }
}
