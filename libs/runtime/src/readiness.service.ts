import { Injectable, SetMetadata } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { Readiness, ReadinessCheck, readinessOf } from '@hookbase/domain';
import { ShutdownCoordinator } from './shutdown-coordinator';

/** A provider that can tell whether one dependency of its service works now. */
export interface ReadinessProbe {
  /** The dependency it checks, as the readiness answer names it. */
  readonly readinessName: string;
  /** Why the dependency cannot serve now, or undefined when it can. Should answer quickly. */
  checkReadiness(): Promise<string | undefined>;
}

const READINESS_PROBE = 'hookbase:readiness-probe';

/** Marks a provider class (implementing ReadinessProbe) whose check the readiness answer runs. */
export const ProbesReadiness = () => SetMetadata(READINESS_PROBE, true);

/** A probe that has not answered by then counts as failing: a probe must never hang readiness. */
export const PROBE_TIMEOUT_MS = 3_000;

/**
 * Whether this process can do its job now: runs every provider marked @ProbesReadiness (PostgreSQL
 * answering with migrations applied, Kafka reachable, each consumer in its group), together, each
 * bounded by PROBE_TIMEOUT_MS.
 */
@Injectable()
export class ReadinessService {
  private probes: ReadinessProbe[] | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly shutdown: ShutdownCoordinator,
  ) {}

  async evaluate(): Promise<Readiness> {
    // A stopping process is taken out of rotation first, whatever its dependencies answer.
    if (this.shutdown.draining) {
      return readinessOf([{ name: 'process', problem: 'shutting down' }]);
    }
    const checks = await Promise.all(this.registered().map((probe) => runProbe(probe)));
    return readinessOf(checks);
  }

  private registered(): ReadinessProbe[] {
    this.probes ??= this.discovery
      .getProviders()
      .filter(
        (wrapper) =>
          wrapper.instance &&
          wrapper.metatype &&
          this.reflector.get<boolean | undefined>(READINESS_PROBE, wrapper.metatype),
      )
      .map((wrapper) => wrapper.instance as ReadinessProbe)
      .sort((a, b) => a.readinessName.localeCompare(b.readinessName));
    return this.probes;
  }
}

async function runProbe(probe: ReadinessProbe): Promise<ReadinessCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS);
  });
  try {
    const problem = await Promise.race([
      probe.checkReadiness().catch((error: Error) => error.message || String(error)),
      timeout,
    ]);
    return problem === undefined
      ? { name: probe.readinessName }
      : { name: probe.readinessName, problem };
  } finally {
    clearTimeout(timer);
  }
}
