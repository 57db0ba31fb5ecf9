import { monitorEventLoopDelay } from 'node:perf_hooks';
import { now } from './util';
import { ConsumerLag } from './kafka-watch';
import { CLOCK_TICKS_PER_SECOND, sampleProcess } from './process-stats';
import { ServiceHandle } from './stack';

export interface ResourcePoint {
  at: number;
  /** Resident set size per service, MB. */
  rssMb: Record<string, number>;
  /** CPU time used so far per service, seconds. */
  cpuSeconds: Record<string, number>;
  lag: ConsumerLag | null;
}

export interface ServiceUsage {
  name: string;
  pid: number | undefined;
  /** VmHWM at the end of the run: the process's peak over its whole life. */
  peakRssMb: number | null;
  /** Highest VmRSS sampled within the window asked for. */
  windowPeakRssMb: number | null;
  /** CPU time used within the window (or since sampling began). */
  cpuSeconds: number | null;
  /** That CPU time as a share of one core over the window, percent. */
  cpuPercent: number | null;
}

/**
 * Samples every service's memory and CPU (from /proc) and the consumer lag once a second, for
 * the result's time series and the peaks. One sample at a time: a slow broker answer delays the next sample
 * rather than piling requests up.
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
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    this.running = true;
    this.loopDelay.enable();
    this.loop = (async () => {
      while (this.running) {
        const started = now();
        await this.sample();
        const wait = this.intervalMs - (now() - started);
        if (wait > 0 && this.running) await new Promise((resolve) => setTimeout(resolve, wait));
      }
    })();
  }

  async sample(): Promise<ResourcePoint> {
    const rssMb: Record<string, number> = {};
    const cpuSeconds: Record<string, number> = {};
    await Promise.all(
      this.services.map(async (service) => {
        if (!service.pid) return;
        const sample = await sampleProcess(service.pid);
        if (!sample) return;
        rssMb[service.name] = sample.rssKb / 1024;
        cpuSeconds[service.name] = sample.cpuTicks / CLOCK_TICKS_PER_SECOND;
      }),
    );
    const lag = await this.lag().catch(() => null);
    const point = { at: now(), rssMb, cpuSeconds, lag };
    this.points.push(point);
    return point;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    this.loopDelay.disable();
  }

  /** Peaks and CPU of each service, read before the services are stopped. */
  async usage(window?: { fromMs: number; toMs: number }): Promise<ServiceUsage[]> {
    return Promise.all(
      this.services.map(async (service) => {
        const sample = service.pid ? await sampleProcess(service.pid) : undefined;
        const inWindow = this.points.filter(
          (p) => !window || (p.at >= window.fromMs && p.at <= window.toMs),
        );
        const sampled = inWindow.map((p) => p.rssMb[service.name]).filter((v) => v !== undefined);
        const cpu = inWindow.filter((p) => p.cpuSeconds[service.name] !== undefined);
        const cpuSeconds =
          cpu.length >= 2
            ? cpu[cpu.length - 1].cpuSeconds[service.name] - cpu[0].cpuSeconds[service.name]
            : null;
        const spanSeconds = cpu.length >= 2 ? (cpu[cpu.length - 1].at - cpu[0].at) / 1000 : 0;
        return {
          name: service.name,
          pid: service.pid,
          peakRssMb: sample ? sample.peakRssKb / 1024 : null,
          windowPeakRssMb: sampled.length > 0 ? Math.max(...sampled) : null,
          cpuSeconds,
          cpuPercent:
            cpuSeconds !== null && spanSeconds > 0 ? (100 * cpuSeconds) / spanSeconds : null,
        };
      }),
    );
  }

  peakLag(window?: { fromMs: number; toMs: number }): ConsumerLag | null {
    const lags = this.points
      .filter((p) => p.lag && (!window || (p.at >= window.fromMs && p.at <= window.toMs)))
      .map((p) => p.lag!);
    if (lags.length === 0) return null;
    return {
      dispatcher: Math.max(...lags.map((l) => l.dispatcher)),
      fanout: Math.max(...lags.map((l) => l.fanout)),
    };
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
