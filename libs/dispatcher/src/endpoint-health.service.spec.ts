import type { HookbaseConfig } from '@hookbase/config';
import type { OperationalEventPublisher } from '@hookbase/kafka';
import type { EndpointEntity, EndpointRepository } from '@hookbase/persistence';
import { EndpointHealthService, streaksOfEach } from './endpoint-health.service';

describe('EndpointHealthService', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);

  function setup(
    options: { periodMs?: number | null; failingAfter?: number; successWrites?: Error[] } = {},
  ) {
    const writes: string[] = [];
    const emitted: { type: string; data: unknown }[] = [];
    let streak = { consecutiveFailures: 0, failingSince: null as Date | null };
    const endpoints = {
      recordFailures: async (failures: { endpointId: string; at: Date }[]) => {
        writes.push(failures.length === 1 ? 'failure' : `${failures.length} failures`);
        streak = {
          consecutiveFailures: streak.consecutiveFailures + failures.length,
          failingSince: streak.failingSince ?? failures[0].at,
        };
        return new Map([
          [
            'ep_1',
            {
              consecutiveFailures: streak.consecutiveFailures,
              failingSince: streak.failingSince!,
              status: 'active' as const,
              autoDisableAfterMs: options.periodMs ?? null,
            },
          ],
        ]);
      },
      recordSuccesses: async (successes: { endpointId: string }[]) => {
        const refusal = options.successWrites?.shift();
        if (refusal) throw refusal;
        writes.push(successes.length === 1 ? 'success' : `${successes.length} successes`);
        streak = { consecutiveFailures: 0, failingSince: null };
      },
      autoDisable: async (
        _id: string,
        _cutoff: Date,
        _at: Date,
        also?: (tx: unknown) => Promise<void>,
      ) => {
        writes.push('disable');
        await also?.('tx');
        return true;
      },
    } as unknown as EndpointRepository;
    const publisher = {
      emit: async (type: string, _subject: unknown, data: unknown) => {
        emitted.push({ type, data });
      },
      emitAll: async (type: string, events: { data: unknown }[], _at: Date, tx?: unknown) => {
        for (const event of events) emitted.push({ type, data: event.data, ...(tx ? { tx } : {}) });
      },
    } as unknown as OperationalEventPublisher;
    const config = {
      delivery: { autoDisableAfterMs: 3_600_000, failingEventAfter: options.failingAfter ?? 3 },
    } as unknown as HookbaseConfig;
    const health = new EndpointHealthService(config, endpoints, publisher);
    const endpoint = {
      id: 'ep_1',
      organizationId: 'org_1',
      operational: false,
      consecutiveFailures: 0,
      lastSuccessAt: null,
    } as unknown as EndpointEntity;
    return { health, endpoint, writes, emitted };
  }

  it('writes successes at most once a minute while all goes well', async () => {
    const { health, endpoint, writes, emitted } = setup();
    for (const ms of [0, 1_000, 30_000, 59_999]) {
      await health.afterAttempt(endpoint, 'succeeded', at(ms));
    }
    expect(writes).toEqual(['success']);
    await health.afterAttempt(endpoint, 'succeeded', at(60_000));
    expect(writes).toEqual(['success', 'success']);
    expect(emitted).toEqual([]);
  });

  it('writes once for successes that finish together, as for one', async () => {
    const { health, endpoint, writes } = setup();
    await Promise.all(
      [0, 1, 2, 3, 4].map((ms) => health.afterAttempt(endpoint, 'succeeded', at(ms))),
    );
    expect(writes).toEqual(['success']);
  });

  it('writes the successes of many endpoints that come due together in one statement', async () => {
    const { health, endpoint, writes } = setup();
    const others = Array.from({ length: 40 }, (_, i) => ({ ...endpoint, id: `ep_${i + 2}` }));
    await Promise.all(
      [endpoint, ...others].map((each) =>
        health.afterAttempt(each as EndpointEntity, 'succeeded', at(0)),
      ),
    );
    expect(writes).toEqual(['41 successes']);
    // A minute on, they come due together again.
    await Promise.all(
      [endpoint, ...others].map((each) =>
        health.afterAttempt(each as EndpointEntity, 'succeeded', at(60_000)),
      ),
    );
    expect(writes).toEqual(['41 successes', '41 successes']);
  });

  it('writes the next success again when the write of one failed', async () => {
    const { health, endpoint, writes } = setup({ successWrites: [new Error('connection lost')] });
    await expect(health.afterAttempt(endpoint, 'succeeded', at(0))).rejects.toThrow(
      'connection lost',
    );
    await health.afterAttempt(endpoint, 'succeeded', at(1_000));
    expect(writes).toEqual(['success']);
  });

  it('writes failures that come together in one statement, and tells of failing once', async () => {
    const { health, endpoint, writes, emitted } = setup({ failingAfter: 3 });
    const changes = await Promise.all(
      [0, 1, 2, 3, 4].map((ms) => health.afterAttempt(endpoint, 'failed', at(ms))),
    );
    expect(writes).toEqual(['5 failures']);
    // Each counts as if written alone: the streak grows by one per failure.
    expect(changes.map((c) => (c.kind === 'failing' ? c.consecutiveFailures : c.kind))).toEqual([
      1, 2, 3, 4, 5,
    ]);
    expect(emitted).toEqual([
      {
        type: 'message.attempt.failing',
        data: { consecutiveFailures: 3, failingSince: at(0).toISOString() },
      },
    ]);
  });

  it('writes every failure, the success ending the streak, and tells of both once', async () => {
    const { health, endpoint, writes, emitted } = setup({ failingAfter: 2 });
    await health.afterAttempt(endpoint, 'succeeded', at(0));
    for (const ms of [1_000, 2_000, 3_000]) await health.afterAttempt(endpoint, 'retry', at(ms));
    // The row the attempt was given is stale (no failures): the success still ends the streak.
    await health.afterAttempt(endpoint, 'succeeded', at(4_000));
    expect(writes).toEqual(['success', 'failure', 'failure', 'failure', 'success']);
    expect(emitted.map((e) => e.type)).toEqual([
      'message.attempt.failing',
      'message.attempt.recovered',
    ]);
  });

  it("disables after the organization's period and tells why, in the transaction of the change", async () => {
    const { health, endpoint, writes, emitted } = setup({ periodMs: 10_000, failingAfter: 100 });
    expect((await health.afterAttempt(endpoint, 'failed', at(0))).kind).toBe('failing');
    expect((await health.afterAttempt(endpoint, 'retry', at(9_999))).kind).toBe('failing');
    const change = await health.afterAttempt(endpoint, 'retry', at(10_000));
    expect(change.kind).toBe('disabled');
    expect(writes.at(-1)).toBe('disable');
    expect(emitted).toEqual([
      {
        type: 'endpoint.disabled',
        data: {
          reason: 'failing',
          consecutiveFailures: 3,
          failingSince: t0.toISOString(),
        },
        tx: 'tx',
      },
    ]);
  });
});

describe('streaksOfEach', () => {
  const streak = (consecutiveFailures: number) => ({
    consecutiveFailures,
    failingSince: new Date('2026-01-01T00:00:00Z'),
    status: 'active' as const,
    autoDisableAfterMs: null,
  });

  it('counts the failures of an endpoint in one write in the order given', () => {
    const items = ['ep_a', 'ep_b', 'ep_a', 'ep_a', 'ep_gone'].map((endpointId) => ({ endpointId }));
    const after = new Map([
      ['ep_a', streak(7)],
      ['ep_b', streak(2)],
    ]);
    expect(streaksOfEach(items, after).map((s) => s?.consecutiveFailures)).toEqual([
      5,
      2,
      6,
      7,
      undefined,
    ]);
  });
});
