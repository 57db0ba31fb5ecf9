import { Controller, Get } from '@nestjs/common';

/** Liveness for load balancers and scripts: answers once the process serves HTTP. */
@Controller('health')
export class HealthController {
  @Get()
  health() {
    return { data: { status: 'ok' } };
  }
}
