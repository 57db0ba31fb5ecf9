import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { MessageRepository } from '@hookbase/persistence';

/** Marks attempts under way, for the message log's `in_flight`. */
export interface AttemptMarks {
  /**
   * An attempt of a message on the stream starts (`attemptsBefore`: the attempts it had made
   * before). Call the returned function when the attempt ends, whatever its outcome.
   */
  begin(messageId: string, attemptsBefore: number): () => void;
}

/** An attempt still under way after this long (and at most twice this) is shown `in_flight`. */
export const STREAM_IN_FLIGHT_SHOWN_AFTER_MS = 50;

type Window = Map<string, number>;

/**
 * Shows attempts of messages on the stream as `in_flight` once they have been under way
 * STREAM_IN_FLIGHT_SHOWN_AFTER_MS, in one write per tick for all of them. An attempt that ends
 * sooner (most do) writes nothing before it: its record moves the message on from `pending`. That
 * keeps a statement off the path from the deliveries topic to the first request.
 *
 * Attempts are gathered in windows of that length: at each tick the window before the last is
 * marked (what is left of it: its attempts have run one to two windows) and a new one opens. No
 * timer runs while no attempt is under way.
 */
@Injectable()
export class StreamAttemptMarks implements AttemptMarks, OnApplicationShutdown {
  private readonly logger = new Logger(StreamAttemptMarks.name);
  private current: Window = new Map();
  private previous: Window = new Map();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly messages: MessageRepository) {}

  begin(messageId: string, attemptsBefore: number): () => void {
    const window = this.current;
    window.set(messageId, attemptsBefore);
    this.timer ??= setTimeout(() => this.tick(), STREAM_IN_FLIGHT_SHOWN_AFTER_MS).unref();
    return () => void window.delete(messageId);
  }

  private tick(): void {
    this.timer = undefined;
    const due = this.previous;
    this.previous = this.current;
    this.current = new Map();
    if (due.size > 0) {
      const attempts = [...due].map(([messageId, attemptsBefore]) => ({
        messageId,
        attemptsBefore,
      }));
      due.clear();
      // Not waited for: the attempts go on, and their records apply with or without the mark.
      this.messages
        .showStreamAttemptsStarted(attempts)
        .catch((error: Error) =>
          this.logger.warn(`attempts not shown in flight: ${error.message}`),
        );
    }
    if (this.previous.size > 0) {
      this.timer = setTimeout(() => this.tick(), STREAM_IN_FLIGHT_SHOWN_AFTER_MS).unref();
    }
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
