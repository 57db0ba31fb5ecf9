import {
  DeleteMessageBatchCommand,
  Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { benchSequence, FirstSeen } from './cloud-sighting';
import { now } from '../core/clock';
import { LedgerSink } from '../core/ledger';

export interface QueueTarget {
  queueUrl: string;
  /** The bench's index of the endpoint that delivers into this queue. */
  endpoint: number;
}

/** Most receive loops at once: one long-poll per queue up to this, then loops share queues. */
export const MAX_RECEIVE_LOOPS = 100;

const LONG_POLL_SECONDS = 1;
const ERROR_PAUSE_MS = 200;
const SHARED_EMPTY_PAUSE_MS = 50;

/**
 * The bench's SQS consumers: one loop per queue (one queue per endpoint) long-polls
 * ReceiveMessage (10 at a time, WaitTimeSeconds 1, so a stop takes at most a second), writes each
 * message it sees to the ledger, timed when the response arrived, then deletes the batch before
 * it asks again. With more queues than MAX_RECEIVE_LOOPS a loop cycles its queues without
 * waiting on any, pausing 50 ms after a pass that found nothing.
 *
 * The reader's own delay is measured per message: first seen − SentTimestamp (moto stamps it
 * when SendMessage arrives, from the same machine's clock).
 */
export class SqsReader {
  readonly stats = {
    receives: 0,
    emptyReceives: 0,
    messages: 0,
    malformed: 0,
    errors: 0,
    lastError: '',
  };
  /** first seen − SentTimestamp, ms, per message counted. */
  readonly readerDelays: number[] = [];
  private readonly seen = new FirstSeen();
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];
  private stopped = false;

  constructor(
    private readonly client: SQSClient,
    private readonly queues: readonly QueueTarget[],
    private readonly sink: LedgerSink,
  ) {}

  get reReceived(): number {
    return this.seen.repeats;
  }

  start(): void {
    // Every request in flight listens on the one stop signal.
    setMaxListeners(0, this.abort.signal);
    const loops = Math.min(MAX_RECEIVE_LOOPS, this.queues.length);
    this.loops = Array.from({ length: loops }, (_, loop) =>
      this.run(this.queues.filter((_, i) => i % loops === loop)),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await Promise.all(this.loops);
  }

  private async run(queues: readonly QueueTarget[]): Promise<void> {
    const wait = queues.length === 1 ? LONG_POLL_SECONDS : 0;
    while (!this.stopped) {
      let found = 0;
      for (const queue of queues) {
        if (this.stopped) return;
        try {
          found += await this.receiveOnce(queue, wait);
        } catch (error) {
          if (this.stopped) return;
          this.stats.errors++;
          this.stats.lastError = (error as Error).name || (error as Error).message;
          await this.pause(ERROR_PAUSE_MS);
        }
      }
      if (found === 0 && wait === 0) await this.pause(SHARED_EMPTY_PAUSE_MS);
    }
  }

  private async receiveOnce(queue: QueueTarget, waitSeconds: number): Promise<number> {
    const { Messages = [] } = await this.client.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ['SentTimestamp'],
      }),
      { abortSignal: this.abort.signal },
    );
    const at = now();
    this.stats.receives++;
    if (Messages.length === 0) {
      this.stats.emptyReceives++;
      return 0;
    }
    for (const message of Messages) this.count(message, queue.endpoint, at);
    await this.client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queue.queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
      { abortSignal: this.abort.signal },
    );
    return Messages.length;
  }

  private count(message: Message, endpoint: number, at: number): void {
    if (!this.seen.first(message.MessageId ?? `${endpoint}/${message.ReceiptHandle}`)) return;
    const seq = benchSequence(message.Body);
    if (seq === undefined) {
      this.stats.malformed++;
      return;
    }
    this.stats.messages++;
    this.sink.attempt(seq, endpoint, at, true);
    const sent = Number(message.Attributes?.SentTimestamp);
    if (Number.isFinite(sent)) this.readerDelays.push(at - sent);
  }

  private pause(ms: number): Promise<void> {
    return pauseUnlessAborted(ms, this.abort.signal);
  }
}

/** Waits `ms`, or less when `signal` aborts: a reader's pause never holds up its stop. */
export function pauseUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}
