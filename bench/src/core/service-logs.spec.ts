import { cleanLogLine, ServiceLogWatch, signature } from './service-logs';

describe('ServiceLogWatch', () => {
  it('counts errors and warnings and keeps one example per kind of line', () => {
    const watch = new ServiceLogWatch();
    const error = (offset: number) =>
      `[Nest] 4242  - 11/30/2025, 7:41:0${offset} PM   ERROR [BatchConsumer:x.dispatcher] partition 3 offsets ${offset}..${offset + 9} failed`;
    watch.line('standalone', error(1));
    watch.line('standalone', error(2));
    watch.line('standalone', '[Nest] 4242  - 11/30/2025, 7:41:03 PM    WARN [kafkajs] rebalancing');
    watch.line('standalone', '[Nest] 4242  - 11/30/2025, 7:41:03 PM     LOG [x] fine');
    const summary = watch.summary();
    expect(summary.errors).toBe(2);
    expect(summary.warnings).toBe(1);
    expect(summary.examples).toHaveLength(2);
    expect(summary.examples[0]).toEqual({
      line: 'standalone: ERROR [BatchConsumer:x.dispatcher] partition 3 offsets 1..10 failed',
      count: 2,
    });
  });

  it('reads JSON lines by their level, and shows them as level, context and message', () => {
    const watch = new ServiceLogWatch();
    const line = (level: string, message: string) =>
      JSON.stringify({
        level,
        time: '2026-12-02T08:00:00.000Z',
        service: 'hookbase-standalone',
        context: 'RetryScheduler',
        message,
      });
    watch.line('standalone', line('error', 'retry pass failed: offset 12'));
    watch.line('standalone', line('fatal', 'consumer could not start'));
    watch.line('standalone', line('warn', 'lease renewal failed'));
    watch.line('standalone', line('info', 'ERROR in a message at info is not an error'));
    const summary = watch.summary();
    expect(summary.errors).toBe(2);
    expect(summary.warnings).toBe(1);
    expect(summary.examples[0]).toEqual({
      line: 'standalone: ERROR [RetryScheduler] retry pass failed: offset 12',
      count: 1,
    });
  });

  it('treats ids and numbers as the same line', () => {
    expect(signature('message msg_01abc failed after 3 attempts')).toBe(
      signature('message msg_99zz failed after 5 attempts'),
    );
  });

  it('leaves lines that are not Nest’s alone', () => {
    expect(cleanLogLine('  plain text  ')).toBe('plain text');
  });
});
