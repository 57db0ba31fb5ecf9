import { context } from '@opentelemetry/api';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import {
  Metadata,
  Server,
  ServerCredentials,
  ServerUnaryCall,
  ServiceDefinition,
  sendUnaryData,
} from '@grpc/grpc-js';
import { loadSync, Options } from '@grpc/proto-loader';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import secureJson from 'secure-json-parse';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  DomainError,
  jsonShapeProblem,
  parseInput,
  PublishEventInput,
  publishEventParser,
  ValidationIssue,
} from '@hookbase/domain';
import { ApiKeyPrincipal, AuthService, RequestLimits } from '@hookbase/auth';
import { IngestMetrics, METRICS, NO_METRICS, RequestBodies } from '@hookbase/runtime';
import { countedBatch, countedPublish } from './ingest-counting';
import { toGrpcError } from './grpc-errors';
import { openReceiveWindows, receiveWindowsFor } from './grpc-receive-windows';
import { PublishBatch } from './publish-batch.use-case';
import { callerTraceContext } from './caller-trace';
import {
  PAYLOAD_JSON,
  PublishedEvent,
  PublishEvent,
  ReadEventInput,
} from './publish-event.use-case';

/** The contract, read at runtime from the repository (from dist/ too): never copied. */
export const INGEST_PROTO = join('proto', 'hookbase', 'v1', 'ingest.proto');
export const INGEST_SERVICE = 'hookbase.v1.Ingest';
/** How the server (and Hookbase's own tests) load the .proto: field names as written in it. */
export const INGEST_PROTO_OPTIONS: Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** Walks up from `from` to the folder holding package.json and the .proto. */
export function ingestProtoPath(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, INGEST_PROTO))) {
      return join(dir, INGEST_PROTO);
    }
    if (dirname(dir) === dir) throw new Error(`${INGEST_PROTO} not found above ${from}`);
  }
}

export interface GrpcPublishRequest {
  event_type: string;
  payload_json: string;
  idempotency_key: string;
  endpoint_ids: string[];
  channels?: string[];
  application_id: string;
}

export interface GrpcPublishResponse {
  id: string;
  event_type: string;
  accepted_at: string;
  duplicate: boolean;
}

type GrpcBatchResult =
  | { event: GrpcPublishResponse }
  | { error: { code: string; message: string; details_json: string } };

/** How long a shutdown waits for calls in flight before cancelling them. */
const DRAIN_TIMEOUT_MS = 10_000;

/** REST field names in validation messages become the .proto's. */
const PROTO_FIELDS: Record<string, string> = {
  eventType: 'event_type',
  payload: 'payload_json',
  idempotencyKey: 'idempotency_key',
  endpointIds: 'endpoint_ids',
  channels: 'channels',
  applicationId: 'application_id',
};

/**
 * gRPC ingest (`hookbase.v1.Ingest`): the same fields and rules as `POST /v1/events` and
 * `POST /v1/events/batch`, through the same PublishEvent use case and API keys. Listens on
 * HTTP's host, port HOOKBASE_GRPC_PORT (-1: off), plaintext like the HTTP port (TLS belongs to
 * the ingress). A request is at most HOOKBASE_MAX_PAYLOAD_BYTES, as a REST body is.
 */
@Injectable()
export class GrpcIngestServer
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger(GrpcIngestServer.name);
  private server: Server | undefined;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly publishEvent: PublishEvent,
    private readonly batch: PublishBatch,
    private readonly auth: AuthService,
    private readonly limits: RequestLimits,
    @Optional() @Inject(METRICS) private readonly metrics: IngestMetrics = NO_METRICS,
    /** The request bodies served at once, shared with HTTP (absent: none counted). */
    @Optional() private readonly bodies?: RequestBodies,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { port } = this.config.grpc;
    if (port === undefined) {
      this.logger.log('gRPC ingest is off (HOOKBASE_GRPC_PORT=-1)');
      return;
    }
    const definition = loadSync(ingestProtoPath(), INGEST_PROTO_OPTIONS);
    const server = new Server({
      'grpc.max_receive_message_length': this.config.http.maxPayloadBytes,
    });
    server.addService(definition[INGEST_SERVICE] as ServiceDefinition, {
      Publish: (
        call: ServerUnaryCall<GrpcPublishRequest, GrpcPublishResponse>,
        callback: sendUnaryData<GrpcPublishResponse>,
      ) =>
        void this.serve(call, callback, grpcEventBytes(call.request), (key) =>
          countedPublish(this.metrics, 'grpc', async () => {
            await this.limits.takeIngest(key, 1);
            return this.publishOne(key.organizationId, call.request);
          }),
        ),
      PublishBatch: (
        call: ServerUnaryCall<{ events?: GrpcPublishRequest[] }, unknown>,
        callback: sendUnaryData<{ results: GrpcBatchResult[] }>,
      ) =>
        void this.serve(
          call,
          callback,
          (call.request.events ?? []).reduce((sum, event) => sum + grpcEventBytes(event), 0),
          (key) => this.publishBatch(key, call.request),
        ),
    });
    const host = this.config.http.host.includes(':')
      ? `[${this.config.http.host}]`
      : this.config.http.host;
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, actual) =>
        error ? reject(error) : resolve(actual),
      ),
    );
    if (!openReceiveWindows(server, receiveWindowsFor(this.config.http.maxPayloadBytes))) {
      this.logger.warn(
        'could not raise the HTTP/2 receive windows (64 KiB): large batches wait for window updates',
      );
    }
    this.server = server;
    this.logger.log(`gRPC listening on ${host}:${bound}`);
  }

  /** Stops taking calls and lets those in flight finish while Kafka and PostgreSQL are still up. */
  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.logger.warn(`gRPC calls still running after ${DRAIN_TIMEOUT_MS} ms: cancelled`);
        server.forceShutdown();
        resolve();
      }, DRAIN_TIMEOUT_MS);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  onApplicationShutdown(): void {
    this.server?.forceShutdown();
    this.server = undefined;
  }

  /**
   * Serves one call: its message's bytes (`bytes`) are counted with the process's request bodies
   * in flight until it is answered, and a call beyond their budget is answered UNAVAILABLE
   * (`SERVICE_UNAVAILABLE`, `retry-after` 1) without being served.
   */
  private async serve<T>(
    call: { metadata: Metadata; getPeer(): string },
    callback: sendUnaryData<T>,
    bytes: number,
    run: (key: ApiKeyPrincipal) => Promise<T>,
  ): Promise<void> {
    const giveBack = this.bodies ? this.bodies.take(bytes) : () => undefined;
    if (!giveBack) {
      callback(
        this.failure(
          new DomainError(
            'SERVICE_UNAVAILABLE',
            'This instance is serving as many request bodies as it may: send it again',
            { reason: 'request_bodies_in_flight' },
          ),
        ).status,
      );
      return;
    }
    try {
      const [authorization] = call.metadata.get('authorization');
      const key = await this.auth.authenticateApiKey(
        typeof authorization === 'string' ? authorization : undefined,
        peerAddress(call.getPeer()),
      );
      // The call continues the caller's trace when its metadata carries one.
      const traced = callerTraceContext(call.metadata.getMap());
      callback(null, await context.with(traced, () => run(key)));
    } catch (error) {
      callback(this.failure(error).status);
    } finally {
      giveBack();
    }
  }

  private async publishOne(
    organizationId: string,
    request: GrpcPublishRequest,
  ): Promise<GrpcPublishResponse> {
    return toResponse(await this.publishEvent.execute(organizationId, toInput(request)));
  }

  /** Each event is accepted or refused on its own; results come back in the order sent. */
  private async publishBatch(
    key: ApiKeyPrincipal,
    request: { events?: GrpcPublishRequest[] },
  ): Promise<{ results: GrpcBatchResult[] }> {
    const events = request.events ?? [];
    const outcomes = await countedBatch(this.metrics, 'grpc', events, () =>
      this.batch.execute({ key, events, toInput, sizeHint: (max) => `Send 1 to ${max} events` }),
    );
    const results = outcomes.map((outcome): GrpcBatchResult => {
      if (outcome.kind === 'published') return { event: toResponse(outcome.event) };
      const { code, message, details } = this.failure(outcome.error);
      return {
        error: {
          code,
          message,
          details_json: details === undefined ? '' : JSON.stringify(details),
        },
      };
    });
    return { results };
  }

  private failure(error: unknown) {
    const failure = toGrpcError(error);
    if (failure.unexpected) this.logger.error(error instanceof Error ? error.stack : error);
    return failure;
  }
}

/**
 * What an event of a gRPC call counts for among the request bodies in flight: the length of its
 * text fields (the message as received is about that size).
 */
export function grpcEventBytes(request: Partial<GrpcPublishRequest> | undefined): number {
  if (!request) return 0;
  const texts = [
    request.event_type,
    request.payload_json,
    request.idempotency_key,
    request.application_id,
    ...(request.endpoint_ids ?? []),
    ...(request.channels ?? []),
  ];
  return texts.reduce((sum, text) => sum + (typeof text === 'string' ? text.length : 0), 0);
}

/** The client's address from a gRPC peer (`ipv4:127.0.0.1:5000`, `ipv6:[::1]:5000`). */
export function peerAddress(peer: string): string {
  const text = peer.replace(/^ipv[46]:/, '');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return bracketed[1];
  const v4 = /^([^:]+):\d+$/.exec(text);
  return v4 ? v4[1] : text;
}

/** A gRPC request as the input REST validates, with the same schema. */
export function toInput(request: GrpcPublishRequest): PublishEventInput {
  const text = request.payload_json ?? '';
  if (text.trim() === '') {
    throw new DomainError('INVALID_JSON', 'payload_json is empty: send a JSON object, e.g. "{}"');
  }
  const problem = jsonShapeProblem(text);
  if (problem) {
    throw new DomainError(
      'VALIDATION_FAILED',
      `Invalid request: payload_json: ${problem.message}`,
      {
        issues: [{ path: 'payload_json', message: problem.message }],
      },
    );
  }
  let payload: unknown;
  try {
    // As REST's body parser does: keys that could poison prototypes are refused.
    payload = secureJson.parse(text, undefined, {
      protoAction: 'error',
      constructorAction: 'error',
    });
  } catch (error) {
    throw new DomainError(
      'INVALID_JSON',
      `payload_json is not valid JSON: ${(error as Error).message}`,
    );
  }
  const endpointIds = request.endpoint_ids ?? [];
  const candidate = {
    eventType: request.event_type ?? '',
    payload,
    ...(request.idempotency_key ? { idempotencyKey: request.idempotency_key } : {}),
    ...(endpointIds.length > 0 ? { endpointIds } : {}),
    ...(request.channels && request.channels.length > 0 ? { channels: request.channels } : {}),
    ...(request.application_id ? { applicationId: request.application_id } : {}),
  };
  let input: ReadEventInput;
  try {
    input = parseInput(publishEventParser, candidate);
  } catch (error) {
    throw withProtoFieldNames(error);
  }
  // The record can carry the text as sent: it is the payload's own, checked above.
  if (input.payload === payload) input[PAYLOAD_JSON] = text;
  return input;
}

function withProtoFieldNames(error: unknown): unknown {
  if (!(error instanceof DomainError) || error.code !== 'VALIDATION_FAILED') return error;
  const issues = (error.details as { issues?: ValidationIssue[] } | undefined)?.issues;
  if (!issues) return error;
  const renamed = issues.map((issue) => {
    const [first, ...rest] = issue.path.split('.');
    return { ...issue, path: [PROTO_FIELDS[first] ?? first, ...rest].join('.') };
  });
  const summary = renamed.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return new DomainError('VALIDATION_FAILED', `Invalid request: ${summary}`, { issues: renamed });
}

function toResponse(event: PublishedEvent): GrpcPublishResponse {
  return {
    id: event.id,
    event_type: event.eventType,
    accepted_at: event.acceptedAt,
    duplicate: event.duplicate,
  };
}
