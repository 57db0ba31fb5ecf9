import { Logger } from 'pino';
import { NestLoggerAdapter } from './nest-logger.adapter';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** A pino stand-in recording each call: level, fields and message. */
function recordingPino() {
  const calls: { level: Level; fields: Record<string, unknown>; message: string }[] = [];
  const at =
    (level: Level) =>
    (fields: Record<string, unknown>, message: string): void => {
      calls.push({ level, fields, message });
    };
  const logger = {
    fatal: at('fatal'),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
  } as unknown as Logger;
  return { logger, calls };
}

describe('NestLoggerAdapter', () => {
  it("maps each of Nest's levels to pino's", () => {
    const { logger, calls } = recordingPino();
    const adapter = new NestLoggerAdapter(logger);
    adapter.log('a');
    adapter.warn('b');
    adapter.error('c');
    adapter.debug('d');
    adapter.verbose('e');
    adapter.fatal('f');
    expect(calls.map((call) => [call.level, call.message])).toEqual([
      ['info', 'a'],
      ['warn', 'b'],
      ['error', 'c'],
      ['debug', 'd'],
      ['trace', 'e'],
      ['fatal', 'f'],
    ]);
  });

  it('puts the context Nest passes last into its own field', () => {
    const { logger, calls } = recordingPino();
    new NestLoggerAdapter(logger).log('started', 'hookbase-fanout');
    expect(calls).toEqual([
      { level: 'info', fields: { context: 'hookbase-fanout' }, message: 'started' },
    ]);
  });

  it("keeps an error's stack apart from its context", () => {
    const { logger, calls } = recordingPino();
    const adapter = new NestLoggerAdapter(logger);
    adapter.error('boom', 'Error: boom\n    at x', 'HttpExceptionFilter');
    // What Nest's Logger passes for `logger.error(message)` when it has a context.
    adapter.error('plain', undefined, 'RetryScheduler');
    expect(calls).toEqual([
      {
        level: 'error',
        fields: { context: 'HttpExceptionFilter', stack: 'Error: boom\n    at x' },
        message: 'boom',
      },
      { level: 'error', fields: { context: 'RetryScheduler' }, message: 'plain' },
    ]);
  });

  it('writes an object as fields with its message as the message', () => {
    const { logger, calls } = recordingPino();
    new NestLoggerAdapter(logger).warn(
      { message: 'Connection timeout', namespace: 'Connection', kafka: { broker: 'b:1' } },
      'kafkajs',
    );
    expect(calls).toEqual([
      {
        level: 'warn',
        fields: { namespace: 'Connection', kafka: { broker: 'b:1' }, context: 'kafkajs' },
        message: 'Connection timeout',
      },
    ]);
  });

  it('writes an Error with its message, keeping the error for its stack', () => {
    const { logger, calls } = recordingPino();
    const error = new Error('it broke');
    new NestLoggerAdapter(logger).error(error);
    expect(calls).toEqual([{ level: 'error', fields: { err: error }, message: 'it broke' }]);
  });
});
