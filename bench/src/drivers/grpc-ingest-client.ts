import { Metadata, status } from '@grpc/grpc-js';
import type { Client, ServiceError } from '@grpc/grpc-js';
import { grpcIngestClient } from '@hookbase/testing';
import { join } from 'node:path';
import { ROOT } from '../core/util';
import { EventPublisher, PublishOutcome } from './ingest-clients';
import { BenchEvent } from './publisher';

interface PublishRequest {
  event_type: string;
  payload_json: string;
}

/** A PublishBatch result as @grpc/proto-loader decodes it with `oneofs: true`. */
export interface BatchResult {
  result?: 'event' | 'error';
  event?: { id: string };
  error?: { code: string; message: string };
}

type Callback<T> = (error: ServiceError | null, value?: T) => void;
type Unary = (request: unknown, metadata: Metadata, options: object, done: Callback<never>) => void;

/** A bench event as the .proto's PublishRequest: the payload as JSON text. */
export function toPublishRequest(event: BenchEvent): PublishRequest {
  return { event_type: event.eventType, payload_json: JSON.stringify(event.payload) };
}

/**
 * A failed call, as the ledger counts it: a status the server chose (the Hookbase code in the
 * `hookbase-error-code` trailer, or a request refused as too large) is a refusal; anything else
 * (deadline, connection lost) failed with the outcome unknown.
 */
export function grpcErrorOutcome(error: Pick<ServiceError, 'code' | 'metadata'>): PublishOutcome {
  const hookbaseCode = error.metadata?.get('hookbase-error-code')[0];
  const name = status[error.code] ?? String(error.code);
  if (typeof hookbaseCode === 'string' && hookbaseCode)
    return { kind: 'refused', detail: `gRPC ${name} ${hookbaseCode}` };
  if (error.code === status.RESOURCE_EXHAUSTED) return { kind: 'refused', detail: `gRPC ${name}` };
  return { kind: 'failed', detail: `gRPC ${name}` };
}

/** PublishBatch's results, one outcome per event sent; a short answer fails every event. */
export function grpcBatchOutcomes(
  results: readonly BatchResult[] | undefined,
  count: number,
): PublishOutcome[] {
  if (!results || results.length !== count) {
    const detail = `PublishBatch answered ${results?.length ?? 'no'} results for ${count} events`;
    return Array.from({ length: count }, () => ({ kind: 'failed', detail }));
  }
  return results.map((result): PublishOutcome => {
    if (result.result === 'event' && typeof result.event?.id === 'string')
      return { kind: 'accepted', eventId: result.event.id };
    if (result.result === 'error')
      return { kind: 'refused', detail: `gRPC result ${result.error?.code ?? 'without a code'}` };
    return { kind: 'failed', detail: 'PublishBatch result without event or error' };
  });
}

/**
 * The tests' @grpc/grpc-js client of `hookbase.v1.Ingest` (built from the repository's .proto),
 * the API key in the `authorization` metadata. One channel (one HTTP/2 connection): concurrent calls are
 * streams on it, as a gRPC back end would send them. Every call has a 30 s deadline.
 */
export class GrpcIngestClient {
  private readonly stub: Client & Record<'Publish' | 'PublishBatch', Unary>;
  private readonly metadata = new Metadata();

  constructor(address: string, apiKey: string) {
    const proto = join(ROOT, 'proto', 'hookbase', 'v1', 'ingest.proto');
    this.stub = grpcIngestClient(address, proto) as typeof this.stub;
    this.metadata.set('authorization', `Bearer ${apiKey}`);
  }

  private closed = false;
  /** Closes the channel (once, whichever publisher asks first). */
  close(): void {
    if (!this.closed) this.stub.close();
    this.closed = true;
  }

  private call<T>(method: 'Publish' | 'PublishBatch', request: unknown) {
    return new Promise<{ value?: T; error?: ServiceError }>((resolve) =>
      this.stub[method](request, this.metadata, { deadline: Date.now() + 30_000 }, (error, value) =>
        resolve(error ? { error } : { value: value as T }),
      ),
    );
  }

  /** `Publish`, one call per event (the events of a group go concurrently). */
  readonly publishEach: EventPublisher = {
    publish: (events) =>
      Promise.all(
        events.map(async (event): Promise<PublishOutcome> => {
          const { value, error } = await this.call<{ id?: string }>(
            'Publish',
            toPublishRequest(event),
          );
          if (error) return grpcErrorOutcome(error);
          return typeof value?.id === 'string'
            ? { kind: 'accepted', eventId: value.id }
            : { kind: 'failed', detail: 'Publish answered without an event id' };
        }),
      ),
    close: async () => this.close(),
  };

  /** `PublishBatch`, the group as one call. */
  readonly publishBatch: EventPublisher = {
    publish: async (events) => {
      const request = { events: events.map(toPublishRequest) };
      const { value, error } = await this.call<{ results: BatchResult[] }>('PublishBatch', request);
      if (error) return events.map(() => grpcErrorOutcome(error));
      return grpcBatchOutcomes(value?.results, events.length);
    },
    close: async () => this.close(),
  };
}
