import { Inject, Injectable, Optional } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { InFlightBytes } from '@hookbase/domain';
import { HookbaseMetrics } from './metrics/hookbase-metrics';

/**
 * The request bodies this process serves at once, over HTTP and gRPC together, within
 * HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES (`InFlightBytes`), shown by
 * `hookbase_http_in_flight_body_bytes`; each refusal is counted in
 * `hookbase_http_bodies_refused_total`.
 */
@Injectable()
export class RequestBodies {
  private readonly inFlight: InFlightBytes;

  constructor(
    @Inject(HOOKBASE_CONFIG) config: HookbaseConfig,
    @Optional() @Inject(HookbaseMetrics) private readonly metrics: HookbaseMetrics | null = null,
  ) {
    this.inFlight = new InFlightBytes(config.http.inFlightBodyBytes);
    metrics?.addScrapeSource({
      collect: async (catalog) => void catalog.httpInFlightBodyBytes.set(this.inFlight.heldBytes),
    });
  }

  /**
   * Takes `bytes` for a request: the function that gives them back once it has been answered, or
   * undefined when they do not fit (the request is to be answered 503 without being served).
   */
  take(bytes: number): (() => void) | undefined {
    if (!this.inFlight.take(bytes)) {
      this.metrics?.httpBodiesRefusedTotal.inc();
      return undefined;
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.inFlight.give(bytes);
    };
  }
}
