import { Injectable } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { loadConfig } from '@hookbase/config';
import { ReadinessService } from './readiness.service';
import {
  Drainable,
  DrainsOnShutdown,
  settledBy,
  ShutdownCoordinator,
} from './shutdown-coordinator';

@Injectable()
@DrainsOnShutdown()
class Consumer implements Drainable {
  readonly drainName = 'consumer';
  deadlines: number[] = [];
  constructor(private readonly fail = false) {}
  async drain(deadline: number): Promise<void> {
    this.deadlines.push(deadline);
    if (this.fail) throw new Error('broker gone');
  }
}

@Injectable()
class NotDrained {
  drain = jest.fn();
}

function coordinatorWith(instances: object[], drainMs = 5_000) {
  const discovery = {
    getProviders: () => instances.map((instance) => ({ instance, metatype: instance.constructor })),
  } as unknown as DiscoveryService;
  const config = loadConfig({ HOOKBASE_SHUTDOWN_DRAIN_MS: String(drainMs) });
  return { coordinator: new ShutdownCoordinator(config, discovery, new Reflector()), discovery };
}

describe('ShutdownCoordinator', () => {
  it('is not draining until the stop begins, and keeps the first deadline', () => {
    const { coordinator } = coordinatorWith([]);
    expect(coordinator.draining).toBe(false);
    expect(coordinator.begin(1_000)).toBe(6_000);
    expect(coordinator.draining).toBe(true);
    expect(coordinator.begin(2_000)).toBe(6_000);
  });

  it('drains every marked provider against one deadline, even when one of them fails', async () => {
    const failing = new Consumer(true);
    const healthy = new Consumer();
    const other = new NotDrained();
    const { coordinator } = coordinatorWith([failing, healthy, other]);
    const deadline = coordinator.begin();
    await coordinator.beforeApplicationShutdown();
    expect(failing.deadlines).toEqual([deadline]);
    expect(healthy.deadlines).toEqual([deadline]);
    expect(other.drain).not.toHaveBeenCalled();
    // Once: a second close does not drain again.
    await coordinator.beforeApplicationShutdown();
    expect(healthy.deadlines).toHaveLength(1);
  });

  it('begins the stop itself when the application closes without a signal', async () => {
    const consumer = new Consumer();
    const { coordinator } = coordinatorWith([consumer], 1_000);
    const before = Date.now();
    await coordinator.beforeApplicationShutdown();
    expect(coordinator.draining).toBe(true);
    expect(consumer.deadlines[0]).toBeGreaterThanOrEqual(before + 1_000);
  });

  it('takes the process out of rotation first: not ready while stopping, without asking probes', async () => {
    const { coordinator, discovery } = coordinatorWith([]);
    const readiness = new ReadinessService(discovery, new Reflector(), coordinator);
    expect(await readiness.evaluate()).toEqual({ ready: true, checks: [] });
    coordinator.begin();
    expect(await readiness.evaluate()).toEqual({
      ready: false,
      checks: [{ name: 'process', problem: 'shutting down' }],
      reasons: ['process: shutting down'],
    });
  });
});

describe('settledBy', () => {
  it('answers true when the work settles (resolved or rejected) before the deadline', async () => {
    expect(await settledBy(Promise.resolve(), Date.now() + 1_000)).toBe(true);
    expect(await settledBy(Promise.reject(new Error('x')), Date.now() + 1_000)).toBe(true);
  });

  it('answers false at the deadline when the work is still running', async () => {
    expect(await settledBy(new Promise(() => undefined), Date.now() + 20)).toBe(false);
  });
});
