import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RateLimitedError } from '@hookbase/domain';
import { toHttpError } from './error-mapping';

@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpExceptionFilter');

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const mapped = toHttpError(error);
    if (mapped.unexpected) this.logger.error(error instanceof Error ? error.stack : String(error));
    // Not accepted now: say when to try again (clients and load balancers honour it).
    if (mapped.status === 503) void reply.header('retry-after', '1');
    if (error instanceof RateLimitedError) {
      void reply.header('retry-after', String(error.retryAfterSeconds));
    }
    void reply.status(mapped.status).send(mapped.body);
  }
}
