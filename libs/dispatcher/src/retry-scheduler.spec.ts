import { loadConfig } from '@hookbase/config';
import { ClaimedMessage, MessageRepository } from '@hookbase/persistence';
import { DeliveryService } from './delivery.service';
import { PendingDelivery } from './pending-delivery';
import { RetryScheduler } from './retry-scheduler';

/** Lets every promise callback queued so far run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A scheduler over stand-ins: each claim answers the next of `claims` (then nothing), and each
 * pass of deliveries stays under way until the test finishes it.
 */
function setUp(claims: number[], env: Record<string, string> = {}) {
  let claimCalls = 0;
  /** The payload bytes each claim was asked to stay within. */
  const payloadBytes: number[] = [];
  const messages = {
    claimForRetry: async (limit: number, _leaseMs: number, bytes: number) => {
      payloadBytes.push(bytes);
      const count = Math.min(limit, claims[claimCalls++] ?? 0);
      const due = Array.from({ length: count }, (_, i) => ({
        messageId: `msg_${claimCalls}_${i}`,
      }));
      return { transitioned: [], skipped: [], messages: due as unknown as ClaimedMessage[] };
    },
  } as unknown as MessageRepository;
  const passes: { deliveries: readonly PendingDelivery[]; finish: (error?: Error) => void }[] = [];
  const delivery = {
    deliver: (deliveries: readonly PendingDelivery[]) =>
      new Promise<void>((resolve, reject) =>
        passes.push({ deliveries, finish: (error) => (error ? reject(error) : resolve()) }),
      ),
  } as unknown as DeliveryService;
  const scheduler = new RetryScheduler(
    loadConfig({ HOOKBASE_RETRY_POLL_MS: '50', ...env }),
    messages,
    delivery,
  );
  return { scheduler, passes, claims: () => claimCalls, payloadBytes };
}

describe('RetryScheduler', () => {
  it("takes the next claim while the last one's attempts finish, and not a third", async () => {
    const { scheduler, passes, claims } = setUp([200, 200, 200, 200]);
    scheduler.onApplicationBootstrap();
    await settle();
    expect(claims()).toBe(2);
    expect(passes.map((pass) => pass.deliveries.length)).toEqual([200, 200]);
    expect(passes[0].deliveries[0]).toMatchObject({ source: 'scheduled', messageId: 'msg_1_0' });

    // One claim finishes: the next one is taken at once, the other still under way.
    passes[1].finish();
    await settle();
    expect(claims()).toBe(3);
    expect(passes).toHaveLength(3);

    // A failed pass is logged and frees its place like any other (its claims keep their lease).
    passes[0].finish(new Error('store went away'));
    await settle();
    expect(claims()).toBe(4);
    const drained = scheduler.drain(Date.now() + 5_000);
    let done = false;
    void drained.then(() => (done = true));
    await settle();
    // The drain waits for the attempts of the claims under way, and claims nothing more.
    expect(done).toBe(false);
    for (const pass of passes.slice(2)) pass.finish();
    await drained;
    expect(claims()).toBe(4);
  });

  it("reads each claim's payloads within a quarter of the read-ahead's payload budget", async () => {
    const { scheduler, passes, payloadBytes } = setUp([200, 200], {
      HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES: '1000003',
    });
    scheduler.onApplicationBootstrap();
    await settle();
    // Two claims under way hold at most half of the budget.
    expect(payloadBytes).toEqual([250_000, 250_000]);
    const stopped = scheduler.onApplicationShutdown();
    passes.forEach((pass) => pass.finish());
    await stopped;
  });

  it('waits for its poll interval once a claim comes back short, with nothing under way', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const { scheduler, passes, claims } = setUp([3]);
      scheduler.onApplicationBootstrap();
      await settle();
      expect(claims()).toBe(1);
      passes[0].finish();
      await settle();
      // Short claim: the next waits for the interval (50 ms here), not only for the pass.
      jest.advanceTimersByTime(49);
      await settle();
      expect(claims()).toBe(1);
      jest.advanceTimersByTime(1);
      await settle();
      expect(claims()).toBe(2);
      const stopped = scheduler.onApplicationShutdown();
      jest.advanceTimersByTime(50);
      await stopped;
    } finally {
      jest.useRealTimers();
    }
  });
});
