import { join } from 'node:path';
import { credentials, loadPackageDefinition, Metadata, status } from '@grpc/grpc-js';
import type {
  CallOptions,
  Client,
  GrpcObject,
  ServiceClientConstructor,
  ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { EventPublisher, PublishOutcome } from './ingest-clients';
import { ROOT } from '../core/util';
import { BenchEvent } from './publisher';

/** The contract the server loads, read from the repository (never copied). */
export const INGEST_PROTO_FILE = join(ROOT, 'proto', 'hookbase', 'v1', 'ingest.proto');

interface PublishRequest {
  event_type: string;
  payload_json: string;
}

interface PublishResponse {
  id: string;
}

/** A PublishBatch result as @grpc/proto-loader decodes it with `oneofs: true`. */
export interface BatchResult {
  result?: 'event' | 'error';
  event?: PublishResponse;
  error?: { code: string; message: string };
}

type Unary<Request, Response> = (
  request: Request,
  metadata: Metadata,
  options: CallOptions,
  callback: (error: ServiceError | null, value?: Response) => void,
) => unknown;

interface IngestStub extends Client {
  Publish: Unary<PublishRequest, PublishResponse>;
  PublishBatch: Unary<{ events: PublishRequest[] }, { results: BatchResult[] }>;
}

/** A bench event as the .proto's PublishRequest: the payload as JSON text. */
export function toPublishRequest(event: BenchEvent): PublishRequest {
  return { event_type: event.eventType, payload_json: JSON.stringify(event.payload) };
}

/**
 * A failed call, as the ledger counts it: a status the server chose (it carries the Hookbase
 * code in the `hookbase-error-code` trailer, or the gRPC layer refused the request as too large)
 * is a refusal; anything else (deadline, connection lost) failed with the outcome unknown.
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
    return Array.from({ length: count }, () => ({
      kind: 'failed' as const,
      detail: `PublishBatch answered ${results?.length ?? 'no'} results for ${count} events`,
    }));
  }
  return results.map((result): PublishOutcome => {
    if (result.result === 'event' && typeof result.event?.id === 'string')
      return { kind: 'accepted', eventId: result.event.id };
    if (result.result === 'error')
      return { kind: 'refused', detail: `gRPC result ${result.error?.code ?? 'without a code'}` };
    return { kind: 'failed', detail: 'PublishBatch result without event or error' };
  });
}

const CALL_TIMEOUT_MS = 30_000;

/**
 * A real @grpc/grpc-js client of `hookbase.v1.Ingest`, built from the repository's .proto as the
 * integration test builds it, the API key in the `authorization` metadata. One channel (one
 * HTTP/2 connection): concurrent calls are streams on it, as a gRPC back end would send them.
 */
export class GrpcIngestClient {
  private readonly stub: IngestStub;

  constructor(
    address: string,
    private readonly apiKey: string,
  ) {
    const definition = loadSync(INGEST_PROTO_FILE, {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const v1 = (loadPackageDefinition(definition).hookbase as GrpcObject).v1 as GrpcObject;
    const Ingest = v1.Ingest as ServiceClientConstructor;
    this.stub = new Ingest(address, credentials.createInsecure()) as unknown as IngestStub;
  }

  private call<Request, Response>(
    method: Unary<Request, Response>,
    request: Request,
  ): Promise<{ value?: Response; error?: ServiceError }> {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${this.apiKey}`);
    return new Promise((resolve) => {
      method.call(
        this.stub,
        request,
        metadata,
        { deadline: Date.now() + CALL_TIMEOUT_MS },
        (error, value) => resolve(error ? { error } : { value }),
      );
    });
  }

  /** `Publish`, one call per event (the events of a group go concurrently). */
  readonly publishEach: EventPublisher = {
    publish: (events) =>
      Promise.all(
        events.map(async (event): Promise<PublishOutcome> => {
          const { value, error } = await this.call(this.stub.Publish, toPublishRequest(event));
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
      const { value, error } = await this.call(this.stub.PublishBatch, {
        events: events.map(toPublishRequest),
      });
      if (error) {
        const outcome = grpcErrorOutcome(error);
        return events.map(() => outcome);
      }
      return grpcBatchOutcomes(value?.results, events.length);
    },
    close: async () => this.close(),
  };

  private closed = false;

  /** Closes the channel (once, whichever publisher asks first). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stub.close();
  }
}
