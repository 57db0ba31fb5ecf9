import { PENDING_RECHECK_MS, pendingCheckDelay } from './request-queue-timer';

// kafkajs's own request queue class, with the method this module installs.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueue = require('kafkajs/src/network/requestQueue');

const silent = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

function queue() {
  return new RequestQueue({
    maxInFlightRequests: 1,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'spec',
    broker: '127.0.0.1:1',
    logger: silent,
  });
}

/** A request whose send is recorded, in the shape kafkajs's queue pushes. */
function request(correlationId: number, sent: number[]) {
  return {
    entry: {
      correlationId,
      apiKey: 3,
      apiName: 'Metadata',
      apiVersion: 0,
      resolve: () => undefined,
      reject: () => undefined,
    },
    expectResponse: true,
    sendRequest: () => sent.push(correlationId),
  };
}

describe('the delay before kafkajs re-checks its queue of held-back requests', () => {
  it('is none while nothing is queued, whatever the throttle', () => {
    expect(pendingCheckDelay(0, -1, 1_000)).toBeUndefined();
    expect(pendingCheckDelay(0, 5_000, 1_000)).toBeUndefined();
  });

  it('runs to the end of a throttle in force, else is the short re-check interval', () => {
    expect(pendingCheckDelay(2, 1_250, 1_000)).toBe(250);
    expect(pendingCheckDelay(2, -1, 1_000)).toBe(PENDING_RECHECK_MS);
    expect(pendingCheckDelay(1, 999, 1_000)).toBe(PENDING_RECHECK_MS);
  });
});

describe("kafkajs's request queue with the fixed timer", () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });

  it('arms no timer while idle, and so warns of no negative timeout', async () => {
    const idle = queue();
    idle.checkPendingRequests();
    expect(idle.throttleCheckTimeoutId).toBeNull();
    // A warning is emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((warning) => warning.name)).not.toContain('TimeoutNegativeWarning');
    idle.destroy();
  });

  it('still sends a request held back by a throttle once the throttle ends', async () => {
    const throttled = queue();
    const sent: number[] = [];
    throttled.maybeThrottle(30);
    throttled.push(request(1, sent));
    expect(sent).toEqual([]);
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
    const deadline = Date.now() + 2_000;
    while (sent.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(sent).toEqual([1]);
    // Sent and nothing else queued: no timer left armed.
    expect(throttled.throttleCheckTimeoutId).toBeNull();
    throttled.destroy();
  });

  it('sends a request held back by the in-flight limit when the one in flight is answered', () => {
    const busy = queue();
    const sent: number[] = [];
    busy.push(request(1, sent));
    busy.push(request(2, sent));
    expect(sent).toEqual([1]);
    busy.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    expect(sent).toEqual([1, 2]);
    busy.destroy();
  });
});
