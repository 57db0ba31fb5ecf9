import { propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  traceContextOfHeaders,
  traceContextOfParent,
  traceHeaders,
  traceParentOf,
  traceParentOfHeaders,
} from './trace-context';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

const withSpan = trace.setSpanContext(ROOT_CONTEXT, {
  traceId: TRACE_ID,
  spanId: SPAN_ID,
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
});

describe('trace context in Kafka headers and the store', () => {
  describe('with tracing off (no propagator registered)', () => {
    it('writes no header and keeps nothing', () => {
      expect(traceHeaders(withSpan)).toBeUndefined();
      expect(traceParentOf(withSpan)).toBeNull();
    });

    it('ignores an incoming traceparent', () => {
      const context = traceContextOfHeaders({ traceparent: Buffer.from(TRACEPARENT) });
      expect(trace.getSpanContext(context)).toBeUndefined();
      expect(traceParentOfHeaders({ traceparent: TRACEPARENT })).toBeNull();
    });
  });

  describe('with the W3C propagator', () => {
    beforeAll(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
    afterAll(() => propagation.disable());

    it('writes the traceparent header of a context', () => {
      expect(traceHeaders(withSpan)).toEqual({ traceparent: TRACEPARENT });
      expect(traceParentOf(withSpan)).toBe(TRACEPARENT);
    });

    it('writes no header for a context without a span', () => {
      expect(traceHeaders(ROOT_CONTEXT)).toBeUndefined();
      expect(traceParentOf(ROOT_CONTEXT)).toBeNull();
    });

    it.each([
      ['a Buffer', Buffer.from(TRACEPARENT)],
      ['a string', TRACEPARENT],
      ['a list (the first counts)', [Buffer.from(TRACEPARENT), 'other']],
    ])('reads the traceparent of a record header given as %s', (_, value) => {
      const context = traceContextOfHeaders({ traceparent: value });
      expect(trace.getSpanContext(context)).toMatchObject({
        traceId: TRACE_ID,
        spanId: SPAN_ID,
        isRemote: true,
      });
      expect(traceParentOfHeaders({ traceparent: value })).toBe(TRACEPARENT);
    });

    it('answers the root context for a record without headers or with a malformed one', () => {
      expect(traceContextOfHeaders(undefined)).toBe(ROOT_CONTEXT);
      expect(trace.getSpanContext(traceContextOfHeaders({}))).toBeUndefined();
      expect(
        trace.getSpanContext(traceContextOfHeaders({ traceparent: 'nonsense' })),
      ).toBeUndefined();
      expect(traceParentOfHeaders({ traceparent: 'nonsense' })).toBeNull();
    });

    it('turns a stored traceparent back into its context, and none into the root', () => {
      expect(trace.getSpanContext(traceContextOfParent(TRACEPARENT))).toMatchObject({
        traceId: TRACE_ID,
        spanId: SPAN_ID,
      });
      expect(traceContextOfParent(null)).toBe(ROOT_CONTEXT);
      expect(traceContextOfParent(undefined)).toBe(ROOT_CONTEXT);
    });
  });
});
