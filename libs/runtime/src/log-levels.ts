import { LogLevel } from '@nestjs/common';
import { HookbaseConfig } from '@hookbase/config';

const NEST_LOG_LEVELS: Record<HookbaseConfig['logLevel'], LogLevel[]> = {
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
};

/** Nest's log levels for the configured HOOKBASE log level. */
export function nestLogLevels(config: HookbaseConfig): LogLevel[] {
  return NEST_LOG_LEVELS[config.logLevel];
}
