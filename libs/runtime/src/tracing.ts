/**
 * OpenTelemetry tracing, on only when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only form) is
 * set. Off, the SDK is never loaded: spans made through `@opentelemetry/api` are its no-op ones.
 * On, the standard `OTEL_*` variables configure the SDK (service name, sampler, protocol, batch
 * timings); Hookbase exports traces only, and instruments nothing automatically.
 */
export interface Tracing {
  /** Sends the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { shutdown: async () => undefined };

let exporting = false;

/**
 * Whether this process exports traces (startTracing started the SDK). When it does not, every
 * span is a no-op and no context crosses Kafka, so the paths that run for each event or attempt
 * make no span at all: a span, its attributes and its context cost about a kilobyte each.
 */
export function tracesExported(): boolean {
  return exporting;
}

export function tracingEnabled(env: Record<string, string | undefined>): boolean {
  return Boolean(
    env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim(),
  );
}

/** Starts the SDK before the application is built, so every span has a provider to go to. */
export function startTracing(
  serviceName: string,
  env: Record<string, string | undefined>,
): Tracing {
  if (!tracingEnabled(env)) return OFF;
  // Loaded here, not imported at the top: a process without tracing never pays for the SDK.
  type SdkNode = typeof import('@opentelemetry/sdk-node');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { NodeSDK }: SdkNode = require('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({
    // The service's own name unless OTEL_SERVICE_NAME gives another.
    serviceName: env.OTEL_SERVICE_NAME?.trim() || serviceName,
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  exporting = true;
  return {
    shutdown: async () => {
      await sdk.shutdown();
      exporting = false;
    },
  };
}
