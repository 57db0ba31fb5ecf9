import type { QueuedMessage } from '@hookbase/persistence';
import type { EndpointRead } from './grouped-lane-store';

/** What a running lane knows between its steps. */
export interface LaneProgress {
  /** The head and the messages read after it. */
  window: QueuedMessage[];
  /** The window came from a read that held the whole queue, and nothing has been forgotten since. */
  readWholeQueue: boolean;
  /** The lane lingered (waited for a wake with an empty window) since its last read. */
  lingered: boolean;
  /** Whether the lane last told the store it waits for the circuit breaker. */
  saidBlocked: boolean;
  /** The last read of the endpoint, reused while the lane runs back to back. */
  endpointRead?: EndpointRead;
  /** A read of the endpoint under way beside a send, to replace `endpointRead` before it ages. */
  refreshing?: Promise<EndpointRead | undefined>;
  /**
   * The store write of the last head's success, still under way while the next head is sent (at
   * most one). The lane waits for it before it reads its queue again or does anything else.
   */
  recording?: Promise<void>;
}

/** One running lane in this process. */
export class LaneHandle {
  /** Set once this process holds the lane's lease. */
  acquired = false;
  /** When the statement that last gave or renewed the lease was sent (this process's clock). */
  leaseConfirmedAt = 0;
  lost = false;
  /** Messages were queued for the lane since it last read its queue. */
  woken = false;
  /** The lane waits, with an empty window, to be woken (see `emptyWindowStep`). */
  lingering = false;
  private interrupt: (() => void) | undefined;
  done: Promise<void> = Promise.resolve();

  /** Sleeps until `until`, or until interrupted (stop, lost lease). */
  sleepUntil(until: Date): Promise<void> {
    const ms = Math.max(0, until.getTime() - Date.now());
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.interrupt = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Waits up to `ms` for a wake (messages queued, a stop, a lost lease). */
  async linger(ms: number): Promise<void> {
    this.lingering = true;
    try {
      await this.sleepUntil(new Date(Date.now() + ms));
    } finally {
      this.lingering = false;
    }
  }

  wake(): void {
    this.interrupt?.();
  }
}

/** The lane drops its window: its next step reads the queue again. */
export function forget(state: LaneProgress): void {
  state.window = [];
  state.readWholeQueue = false;
}

/** Waits for the lane's outstanding success write; a failed write throws (the lane re-reads). */
export async function settle(state: LaneProgress): Promise<void> {
  const recording = state.recording;
  if (!recording) return;
  state.recording = undefined;
  await recording;
}
