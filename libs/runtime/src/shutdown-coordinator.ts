import { BeforeApplicationShutdown, Inject, Injectable, Logger, SetMetadata } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';

/** A provider that takes work and can stop taking it, letting the work under way finish. */
export interface Drainable {
  /** What it drains, as the stop's log lines name it. */
  readonly drainName: string;
  /**
   * Stops taking new work and waits for the work under way, at most until `deadline` (epoch ms);
   * then makes what finished durable (commits, releases). Work still under way at the deadline is
   * left to be done again by the next owner, as after a crash.
   */
  drain(deadline: number): Promise<void>;
}

const DRAINABLE = 'hookbase:drainable';

/** Marks a provider class (implementing Drainable) that the stop drains. */
export const DrainsOnShutdown = () => SetMetadata(DRAINABLE, true);

/**
 * An orderly stop in two phases. `begin()` (at SIGTERM) makes the process refuse new work: its
 * readiness answers 503 and the HTTP edge refuses new requests with 503. Then, as the application
 * closes, every provider marked @DrainsOnShutdown drains at once, all against one deadline
 * (HOOKBASE_SHUTDOWN_DRAIN_MS after `begin()`), before any connection (Kafka, PostgreSQL) closes:
 * Nest runs every `beforeApplicationShutdown` before the first `onApplicationShutdown`.
 */
@Injectable()
export class ShutdownCoordinator implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private deadline: number | undefined;
  private drained: Promise<void> | undefined;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  /** True once the stop began: take no new work. */
  get draining(): boolean {
    return this.deadline !== undefined;
  }

  /** Starts the stop (idempotent); answers the drain deadline (epoch ms). */
  begin(now = Date.now()): number {
    this.deadline ??= now + this.config.shutdown.drainMs;
    return this.deadline;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.drained ??= this.drainAll(this.begin());
    await this.drained;
  }

  private async drainAll(deadline: number): Promise<void> {
    const drainables = this.registered();
    const started = Date.now();
    await Promise.all(
      drainables.map(async (drainable) => {
        try {
          await drainable.drain(deadline);
        } catch (error) {
          this.logger.warn(`${drainable.drainName}: drain failed: ${(error as Error).message}`);
        }
      }),
    );
    this.logger.log(
      drainables.length > 0
        ? `drained ${drainables.map((d) => d.drainName).join(', ')} in ${Date.now() - started} ms`
        : 'nothing to drain',
    );
  }

  private registered(): Drainable[] {
    return this.discovery
      .getProviders()
      .filter(
        (wrapper) =>
          wrapper.instance &&
          wrapper.metatype &&
          this.reflector.get<boolean | undefined>(DRAINABLE, wrapper.metatype),
      )
      .map((wrapper) => wrapper.instance as Drainable);
  }
}

/** Milliseconds left until `deadline` (never negative). */
export function remainingUntil(deadline: number, now = Date.now()): number {
  return Math.max(0, deadline - now);
}

/**
 * Resolves when `work` settles or the deadline passes, whichever is first; true when the work
 * settled in time. Never rejects.
 */
export async function settledBy(work: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), remainingUntil(deadline));
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
