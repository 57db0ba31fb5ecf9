import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ConsumerLag } from './kafka-watch';
import { CLOCK_TICKS_PER_SECOND, sampleProcess } from './process-stats';
import { ServiceHandle } from './stack';
import { now } from './util';

export interface ResourcePoint {
  at: number;
  /** Resident set size (MB) and CPU time used so far (s), per service. */
  rssMb: Record<string, number>;
  cpuSeconds: Record<string, number>;
  lag: ConsumerLag | null;
}

export interface ServiceUsage {
  name: string;
  pid: number | undefined;
  /** VmHWM when read: the process's peak over its whole life. */
  peakRssMb: number | null;
  /** Highest VmRSS sampled within the window asked for. */
  windowPeakRssMb: number | null;
  /** CPU time used within the window, and as a share of one core over it (percent). */
  cpuSeconds: number | null;
  cpuPercent: number | null;
}

type Window = { fromMs: number; toMs: number };

/**
 * Samples every service's memory and CPU (from /proc) and the consumer lag once a second, for
 * the result's time series and the peaks; one sample at a time, so a slow broker delays the next
 * sample rather than piling requests up. Also watches the harness's own event loop and CPU.
 */
export class ResourceSampler {
  readonly points: ResourcePoint[] = [];
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });
  private readonly cpuAtStart = process.cpuUsage();

  constructor(
    private readonly services: readonly ServiceHandle[],
    private readonly lag: () => Promise<ConsumerLag>,
  ) {}

  start(): void {
    this.running = true;
    this.loopDelay.enable();
    this.loop = (async () => {
      while (this.running) {
        const started = now();
        const rssMb: Record<string, number> = {};
        const cpuSeconds: Record<string, number> = {};
        for (const { name, pid } of this.services) {
          const sample = pid ? await sampleProcess(pid) : undefined;
          if (!sample) continue;
          rssMb[name] = sample.rssKb / 1024;
          cpuSeconds[name] = sample.cpuTicks / CLOCK_TICKS_PER_SECOND;
        }
        const lag = await this.lag().catch(() => null);
        this.points.push({ at: now(), rssMb, cpuSeconds, lag });
        const wait = 1000 - (now() - started);
        if (wait > 0 && this.running) await new Promise((resolve) => setTimeout(resolve, wait));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    this.loopDelay.disable();
  }

  private within(window?: Window): ResourcePoint[] {
    return this.points.filter((p) => !window || (p.at >= window.fromMs && p.at <= window.toMs));
  }

  /** Peaks and CPU of each service (read before the services are stopped). */
  usage(window?: Window): Promise<ServiceUsage[]> {
    const points = this.within(window);
    return Promise.all(
      this.services.map(async ({ name, pid }) => {
        const sample = pid ? await sampleProcess(pid) : undefined;
        const rss = points.flatMap((p) => (p.rssMb[name] === undefined ? [] : [p.rssMb[name]]));
        const cpu = points.filter((p) => p.cpuSeconds[name] !== undefined);
        const [first, last] = [cpu[0], cpu.at(-1)];
        const cpuSeconds = cpu.length >= 2 ? last!.cpuSeconds[name] - first.cpuSeconds[name] : null;
        const span = cpu.length >= 2 ? (last!.at - first.at) / 1000 : 0;
        return {
          name,
          pid,
          peakRssMb: sample ? sample.peakRssKb / 1024 : null,
          windowPeakRssMb: rss.length > 0 ? Math.max(...rss) : null,
          cpuSeconds,
          cpuPercent: cpuSeconds !== null && span > 0 ? (100 * cpuSeconds) / span : null,
        };
      }),
    );
  }

  peakLag(window?: Window): ConsumerLag | null {
    const lags = this.within(window).flatMap((p) => (p.lag ? [p.lag] : []));
    if (lags.length === 0) return null;
    const peak = (pick: (lag: ConsumerLag) => number) => Math.max(...lags.map(pick));
    return { dispatcher: peak((l) => l.dispatcher), fanout: peak((l) => l.fanout) };
  }

  /** The harness's own load: if its event loop lagged, its timings are suspect, and it says so. */
  harness(): { eventLoopDelayP99Ms: number; eventLoopDelayMaxMs: number; cpuSeconds: number } {
    const cpu = process.cpuUsage(this.cpuAtStart);
    return {
      eventLoopDelayP99Ms: this.loopDelay.percentile(99) / 1e6,
      eventLoopDelayMaxMs: this.loopDelay.max / 1e6,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    };
  }
}
