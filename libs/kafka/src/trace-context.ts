import { Context, context, propagation, ROOT_CONTEXT, TextMapGetter } from '@opentelemetry/api';
import { IHeaders } from 'kafkajs';

/**
 * Trace context across Kafka records and the store, in W3C Trace Context form (`traceparent`,
 * `tracestate`). With tracing off the API's propagator is a no-op: no header is written, and an
 * incoming one is ignored.
 */

const HEADER_GETTER: TextMapGetter<IHeaders> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => {
    const value = headers[key];
    const first = Array.isArray(value) ? value[0] : value;
    return first === undefined ? undefined : first.toString();
  },
};

/** The record headers that carry `parent` (the active context by default); none when tracing is off. */
export function traceHeaders(
  parent: Context = context.active(),
): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(parent, carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The context a consumed record's headers carry, or `ROOT_CONTEXT` when they carry none. */
export function traceContextOfHeaders(headers: IHeaders | undefined): Context {
  return headers ? propagation.extract(ROOT_CONTEXT, headers, HEADER_GETTER) : ROOT_CONTEXT;
}

/** The `traceparent` a context carries, the one value kept in the store; null when there is none. */
export function traceParentOf(parent: Context = context.active()): string | null {
  return traceHeaders(parent)?.traceparent ?? null;
}

/** The `traceparent` of a consumed record's headers, or null. */
export function traceParentOfHeaders(headers: IHeaders | undefined): string | null {
  return traceParentOf(traceContextOfHeaders(headers));
}

/** The context a stored `traceparent` stands for, or `ROOT_CONTEXT` for none. */
export function traceContextOfParent(traceParent: string | null | undefined): Context {
  return traceParent
    ? propagation.extract(ROOT_CONTEXT, { traceparent: traceParent })
    : ROOT_CONTEXT;
}
