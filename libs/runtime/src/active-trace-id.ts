import { context, isSpanContextValid, trace } from '@opentelemetry/api';

/**
 * The id of the trace the running code belongs to, put on every log line written inside it.
 * Read from OpenTelemetry's active context: undefined until a tracer provider with a context
 * manager is registered (tracing off), so logs carry trace ids exactly when traces exist.
 */
export function activeTraceId(): string | undefined {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
