import { Controller, Get } from '@nestjs/common';
import { dataOf } from './openapi/response-bodies';
import { DescribeRoute } from './openapi/route-description';

/** Liveness for load balancers and scripts: answers once the process serves HTTP. */
@Controller('health')
export class HealthController {
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
}
