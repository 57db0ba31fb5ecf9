import { Context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * The trace a caller's request continues: its W3C `traceparent` (and `tracestate`) from HTTP
 * headers or gRPC metadata, or a new trace when it sends none (or tracing is off).
 */
export function callerTraceContext(carrier: Record<string, unknown>): Context {
  return propagation.extract(ROOT_CONTEXT, carrier, {
    keys: (from) => Object.keys(from),
    get: (from, key) => {
      const value = from[key];
      const first = Array.isArray(value) ? value[0] : value;
      return typeof first === 'string' ? first : undefined;
    },
  });
}
