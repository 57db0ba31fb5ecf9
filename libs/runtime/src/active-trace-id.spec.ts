import {
  Context,
  context,
  ContextManager,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
} from '@opentelemetry/api';
import { activeTraceId } from './active-trace-id';

/** The least context manager that makes `context.with` set the active context (synchronously). */
class StackContextManager implements ContextManager {
  private stack: Context[] = [ROOT_CONTEXT];

  active(): Context {
    return this.stack[this.stack.length - 1];
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.stack.pop();
    }
  }

  bind<T>(_ctx: Context, target: T): T {
    return target;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.stack = [ROOT_CONTEXT];
    return this;
  }
}

describe('activeTraceId', () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const inSpan = (id: string) =>
    trace.setSpanContext(ROOT_CONTEXT, {
      traceId: id,
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.SAMPLED,
    });

  it('is undefined while tracing is off (no context manager registered)', () => {
    expect(context.with(inSpan(traceId), () => activeTraceId())).toBeUndefined();
  });

  describe('with a context manager registered', () => {
    beforeAll(() => context.setGlobalContextManager(new StackContextManager()));
    afterAll(() => context.disable());

    it("is the active span's trace id inside it, and undefined outside", () => {
      expect(context.with(inSpan(traceId), () => activeTraceId())).toBe(traceId);
      expect(activeTraceId()).toBeUndefined();
    });

    it('is undefined for an invalid span context', () => {
      expect(context.with(inSpan('0'.repeat(32)), () => activeTraceId())).toBeUndefined();
    });
  });
});
