import { Controller, Get } from '@nestjs/common';
import { DomainError } from '@hookbase/domain';
import { notReadyMessage, ReadinessService, reportedChecks } from '@hookbase/runtime';
import { dataOf } from './openapi/response-bodies';
import { DescribeRoute } from './openapi/route-description';

const CHECKS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    required: ['name', 'ready'],
    properties: {
      name: { type: 'string' },
      ready: { type: 'boolean' },
      problem: { type: 'string' },
    },
  },
};

/**
 * Health for load balancers, orchestrators and scripts: `/health` and `/health/live` answer once
 * the process serves HTTP; `/health/ready` says whether it can do its job now (its dependencies
 * answer), with the reason when not.
 */
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @DescribeRoute({
    operationId: 'health',
    tag: 'Operations',
    summary: 'Liveness: answers once the process serves HTTP.',
    security: 'none',
    success: {
      status: 200,
      description: 'Serving',
      schema: dataOf({
        type: 'object',
        required: ['status'],
        properties: { status: { const: 'ok' } },
      }),
    },
    errors: [],
    usesStore: false,
  })
  @Get()
  health() {
    return { data: { status: 'ok' } };
  }

  @DescribeRoute({
    operationId: 'healthLive',
    tag: 'Operations',
    summary: 'Liveness probe: the process is up and serves HTTP (restart it when this fails).',
    security: 'none',
    success: {
      status: 200,
      description: 'Live',
      schema: dataOf({
        type: 'object',
        required: ['status'],
        properties: { status: { const: 'live' } },
      }),
    },
    errors: [],
    usesStore: false,
  })
  @Get('live')
  live() {
    return { data: { status: 'live' } };
  }

  @DescribeRoute({
    operationId: 'healthReady',
    tag: 'Operations',
    summary:
      'Readiness probe: PostgreSQL answers with migrations applied, Kafka is reachable and every ' +
      'consumer of the process is in its group. 503 SERVICE_UNAVAILABLE names what is not ready.',
    security: 'none',
    success: {
      status: 200,
      description: 'Ready: every dependency answered',
      schema: dataOf({
        type: 'object',
        required: ['status', 'checks'],
        properties: { status: { const: 'ready' }, checks: CHECKS_SCHEMA },
      }),
    },
    errors: ['SERVICE_UNAVAILABLE'],
    usesStore: false,
  })
  @Get('ready')
  async ready() {
    const readiness = await this.readiness.evaluate();
    const checks = reportedChecks(readiness);
    if (!readiness.ready) {
      throw new DomainError('SERVICE_UNAVAILABLE', notReadyMessage(readiness.reasons), {
        checks,
      });
    }
    return { data: { status: 'ready', checks } };
  }
}
