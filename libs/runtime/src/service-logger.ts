import pino, { DestinationStream, Logger } from 'pino';
import pretty from 'pino-pretty';
import { HookbaseConfig } from '@hookbase/config';

/**
 * Field names whose values never reach a log line, at the top of a logged object or one level
 * down: secrets, keys, tokens, signatures, credentials, and events' payloads (tenants' data).
 * Messages themselves are written by the call sites, which name ids, never such values.
 */
export const REDACTED_FIELDS = [
  'authorization',
  'cookie',
  'secret',
  'secrets',
  'signingSecret',
  'key',
  'apiKey',
  'token',
  'adminToken',
  'password',
  'credentials',
  'signature',
  'webhook-signature',
  'payload',
  'body',
] as const;

export const REDACTED = '[redacted]';

export interface ServiceLoggerOptions {
  /** The service's name, on every line. */
  service: string;
  level: HookbaseConfig['logLevel'];
  format: HookbaseConfig['logFormat'];
  /** The trace the code being run belongs to, if any (see `activeTraceId`). */
  traceId?: () => string | undefined;
  /** Where lines go; standard output unless a test gives its own stream. */
  destination?: DestinationStream;
  /** Colours in `pretty` lines (only for a terminal that wants them). */
  colorize?: boolean;
}

/** The process's logger: pino, one JSON object per line or readable lines, secrets redacted. */
export function createServiceLogger(options: ServiceLoggerOptions): Logger {
  const destination = options.destination ?? process.stdout;
  const { traceId } = options;
  return pino(
    {
      level: options.level,
      base: { service: options.service },
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: traceId
        ? () => {
            const id = traceId();
            return id ? { traceId: id } : {};
          }
        : undefined,
      redact: {
        paths: REDACTED_FIELDS.flatMap((field) => [`["${field}"]`, `*["${field}"]`]),
        censor: REDACTED,
      },
    },
    options.format === 'pretty'
      ? pretty({
          destination,
          sync: true,
          colorize: options.colorize ?? false,
          messageKey: 'message',
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname,service,context',
          messageFormat: '{if context}[{context}] {end}{message}',
        })
      : destination,
  );
}
