import { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

type PinoLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's `LoggerService` over the service's pino logger, so Nest's own lines and every
 * `new Logger(context)` in the code come out in the same format, with the context as a field.
 * Nest passes the context as the last argument, and for errors a stack before it.
 */
export class NestLoggerAdapter implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: PinoLevel, message: unknown, params: unknown[]): void {
    const rest = [...params];
    const fields: Record<string, unknown> = {};
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string') {
      fields.context = rest.pop();
    }
    if (level === 'error' || level === 'fatal') {
      const [stack] = rest;
      if (typeof stack === 'string') fields.stack = stack;
    }
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message }, message.message);
    } else if (isRecord(message)) {
      const { message: text, ...more } = message;
      this.logger[level]({ ...more, ...fields }, typeof text === 'string' ? text : '');
    } else {
      this.logger[level](fields, String(message));
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
