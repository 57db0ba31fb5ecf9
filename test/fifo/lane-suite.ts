import { ResponseScript, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/** A small seeded generator, so a failing run can be told apart from bad luck and repeated. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a FIFO suite runs against: a whole stack, and one receiver its endpoints point at. */
export interface LaneSuite {
  readonly receiver: TestReceiver;
  /** The stack, once the suite's `beforeAll` has started it. */
  readonly stack: RunningStack;
  /** The receiver's base URL, once started. */
  readonly receiverUrl: string;
}

/**
 * Starts, for the enclosing `describe`, a receiver answering as `script` says and a stack that
 * polls the retry schedule every 100 ms (a lane's retries come quickly); stops both after.
 */
export function laneSuite(script: ResponseScript): LaneSuite {
  const receiver = new TestReceiver();
  let stack: RunningStack | undefined;
  let receiverUrl: string | undefined;
  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith(script);
    stack = await startStack({ HOOKBASE_RETRY_POLL_MS: '100' });
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not started: use it inside a test`);
    return value;
  };
  return {
    receiver,
    get stack() {
      return started(stack, 'the stack');
    },
    get receiverUrl() {
      return started(receiverUrl, 'the receiver');
    },
  };
}
