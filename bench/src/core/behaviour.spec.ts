import { answerFor, EndpointBehaviour, HEALTHY, parseFailWith } from './behaviour';

describe('answerFor', () => {
  const flaky: EndpointBehaviour = {
    latencyMs: 5,
    failRate: 0.1,
    failWith: 503,
    failAttempts: 'first',
  };

  it('answers 200 after the latency when healthy', () => {
    expect(answerFor({ ...HEALTHY, latencyMs: 10 }, { messageId: 'msg_a', attempt: 1 })).toEqual({
      kind: 'respond',
      status: 200,
      delayMs: 10,
    });
  });

  it('fails about the configured share of first attempts, and lets their retries succeed', () => {
    let failed = 0;
    for (let i = 0; i < 10_000; i++) {
      const messageId = `msg_${i.toString(36)}`;
      const first = answerFor(flaky, { messageId, attempt: 1 });
      if (first.kind === 'respond' && first.status === 503) {
        failed++;
        expect(answerFor(flaky, { messageId, attempt: 2 })).toMatchObject({ status: 200 });
      }
    }
    expect(failed).toBeGreaterThan(900);
    expect(failed).toBeLessThan(1100);
  });

  it('is stable for a message id', () => {
    const a = answerFor(flaky, { messageId: 'msg_same', attempt: 1 });
    expect(answerFor(flaky, { messageId: 'msg_same', attempt: 1 })).toEqual(a);
  });

  it('fails every attempt of an always-failing endpoint', () => {
    const dead: EndpointBehaviour = {
      latencyMs: 0,
      failRate: 1,
      failWith: 503,
      failAttempts: 'all',
    };
    for (const attempt of [1, 2, 7]) {
      expect(answerFor(dead, { messageId: 'msg_x', attempt })).toEqual({
        kind: 'respond',
        status: 503,
        delayMs: 0,
      });
    }
  });

  it('drops the connection when asked to', () => {
    const dropper: EndpointBehaviour = {
      latencyMs: 0,
      failRate: 1,
      failWith: 'drop',
      failAttempts: 'first',
    };
    expect(answerFor(dropper, { messageId: 'msg_x', attempt: 1 })).toEqual({
      kind: 'drop',
      delayMs: 0,
    });
    expect(answerFor(dropper, { messageId: 'msg_x', attempt: 2 })).toMatchObject({ status: 200 });
  });
});

describe('parseFailWith', () => {
  it('reads a status or drop', () => {
    expect(parseFailWith('503')).toBe(503);
    expect(parseFailWith('429')).toBe(429);
    expect(parseFailWith('drop')).toBe('drop');
  });
  it('refuses anything else', () => {
    expect(() => parseFailWith('200')).toThrow(/400\.\.599/);
    expect(() => parseFailWith('abc')).toThrow(/drop/);
  });
});
