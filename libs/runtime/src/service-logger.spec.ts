import { Writable } from 'node:stream';
import {
  createServiceLogger,
  REDACTED,
  REDACTED_FIELDS,
  ServiceLoggerOptions,
} from './service-logger';

/** A logger writing into memory: the lines it wrote, as text. */
function capture(options: Partial<ServiceLoggerOptions> = {}) {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createServiceLogger({
    service: 'hookbase-test',
    level: 'info',
    format: 'json',
    destination,
    ...options,
  });
  const lines = () => chunks.join('').split('\n').filter(Boolean);
  return { logger, lines };
}

describe('createServiceLogger', () => {
  it('writes one JSON object per line with level, ISO time, service and message', () => {
    const { logger, lines } = capture();
    logger.info({ context: 'Fanout' }, 'first');
    logger.warn('second');
    const [first, second] = lines().map((line) => JSON.parse(line));
    expect(lines()).toHaveLength(2);
    expect(first).toEqual({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      service: 'hookbase-test',
      context: 'Fanout',
      message: 'first',
    });
    expect(second).toMatchObject({ level: 'warn', message: 'second' });
    expect(first).not.toHaveProperty('traceId');
  });

  it('keeps lines below the configured level out', () => {
    const { logger, lines } = capture({ level: 'warn' });
    logger.info('not shown');
    logger.debug('not shown');
    logger.warn('shown');
    logger.error('shown too');
    expect(lines().map((line) => JSON.parse(line).level)).toEqual(['warn', 'error']);
  });

  it('shows debug lines only at debug', () => {
    const { logger, lines } = capture({ level: 'debug' });
    logger.debug('detail');
    expect(JSON.parse(lines()[0])).toMatchObject({ level: 'debug', message: 'detail' });
  });

  it('adds the trace id while code runs inside a trace, and nothing outside one', () => {
    let current: string | undefined = '4bf92f3577b34da6a3ce929d0e0e4736';
    const { logger, lines } = capture({ traceId: () => current });
    logger.info('inside');
    current = undefined;
    logger.info('outside');
    const [inside, outside] = lines().map((line) => JSON.parse(line));
    expect(inside.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(outside).not.toHaveProperty('traceId');
  });

  it.each(REDACTED_FIELDS)('never writes the value of a field named %s', (field) => {
    const { logger, lines } = capture();
    logger.info({ [field]: 'sekret-top', nested: { [field]: 'sekret-nested' } }, 'with fields');
    const line = lines()[0];
    expect(line).not.toContain('sekret');
    expect(JSON.parse(line)).toMatchObject({
      [field]: REDACTED,
      nested: { [field]: REDACTED },
    });
  });

  it('leaves other fields as they are', () => {
    const { logger, lines } = capture();
    logger.info({ endpointId: 'ep_1', kafka: { broker: '127.0.0.1:19092' } }, 'fields');
    expect(JSON.parse(lines()[0])).toMatchObject({
      endpointId: 'ep_1',
      kafka: { broker: '127.0.0.1:19092' },
    });
  });

  it('writes readable lines in the pretty format: time, level, context and message, no JSON', () => {
    const { logger, lines } = capture({ format: 'pretty', traceId: () => undefined });
    logger.info({ context: 'HookbaseApplication' }, 'listening on http://127.0.0.1:3000');
    logger.error('no context here');
    const [first, second] = lines();
    expect(first).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[HookbaseApplication\] listening on http:\/\/127\.0\.0\.1:3000$/,
    );
    expect(second).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] ERROR: no context here$/);
  });

  it('redacts in the pretty format too', () => {
    const { logger, lines } = capture({ format: 'pretty' });
    logger.warn({ credentials: { secretAccessKey: 'sekret' } }, 'with credentials');
    expect(lines().join('\n')).not.toContain('sekret');
    expect(lines().join('\n')).toContain(REDACTED);
  });
});
