import { Inject, Injectable } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DomainError, PublishEventInput } from '@hookbase/domain';
import { ApiKeyPrincipal, RequestLimits } from '@hookbase/auth';
import { PublishEvent, PublishOutcome } from './publish-event.use-case';

/** One event of a batch: published, or refused with the error that refused it. */
export type BatchItemOutcome = PublishOutcome;

/** A batch as an edge (REST or gRPC) received it. */
export interface PublishBatchCommand<T> {
  key: ApiKeyPrincipal;
  /** The events as sent; anything but a list of 1 to HOOKBASE_MAX_BATCH_EVENTS is refused. */
  events: unknown;
  /** Reads one event as sent into the input PublishEvent takes; throws to refuse that event. */
  toInput: (event: T) => PublishEventInput;
  /** The refusal of a batch of the wrong size, in the edge's own words. */
  sizeHint: (maxEvents: number) => string;
}

/**
 * Publishes a batch (`POST /v1/events/batch`, gRPC `PublishBatch`): the whole batch is taken from
 * the key's ingest budget, then each event is accepted or refused on its own; outcomes come back
 * in the order sent. The edges only translate them into their own responses.
 */
@Injectable()
export class PublishBatch {
  constructor(
    private readonly publishEvent: PublishEvent,
    private readonly limits: RequestLimits,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {}

  async execute<T>(command: PublishBatchCommand<T>): Promise<BatchItemOutcome[]> {
    const { key, events, toInput } = command;
    const max = this.config.http.maxBatchEvents;
    if (!Array.isArray(events) || events.length === 0 || events.length > max) {
      throw new DomainError('VALIDATION_FAILED', command.sizeHint(max));
    }
    await this.limits.takeIngest(key, events.length);
    // An event that does not read as one is refused on its own; the rest are published together.
    const outcomes: BatchItemOutcome[] = new Array(events.length);
    const inputs: PublishEventInput[] = [];
    const positions: number[] = [];
    (events as T[]).forEach((event, i) => {
      try {
        inputs.push(toInput(event));
        positions.push(i);
      } catch (error) {
        outcomes[i] = { kind: 'refused', error };
      }
    });
    if (inputs.length > 0) {
      const published = await this.publishEvent.executeAll(key.organizationId, inputs);
      published.forEach((outcome, j) => (outcomes[positions[j]] = outcome));
    }
    return outcomes;
  }
}
