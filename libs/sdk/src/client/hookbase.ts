import { randomUUID } from 'node:crypto';
import createClient, { type Client } from 'openapi-fetch';
import { apiErrorFrom, HookbaseApiError, HookbaseConnectionError } from './errors';
import type { components, operations, paths } from './generated/openapi';
import { DEFAULT_RETRY_POLICY, retryDelay, type RetryPolicy } from './retry';

/** The whole HTTP API, typed from the OpenAPI document: `hookbase.api.GET('/api/...', { params })`. */
export type HookbaseApi = Client<paths>;

export type PublishInput = components['schemas']['PublishEvent'];
export type CreateEndpointInput = components['schemas']['CreateEndpoint'];
export type UpdateEndpointInput = components['schemas']['UpdateEndpoint'];
export type CreateEventTypeInput = components['schemas']['CreateEventType'];
export type UpdateEventTypeInput = components['schemas']['UpdateEventType'];
export type EventTypePolicy = components['schemas']['EventTypePolicy']['eventTypePolicy'];
export type FilterTestInput = components['schemas']['FilterTest'];
/** Which failures `replayFailed` copies: created in `[since, until)`, of `eventTypes`. */
export type ReplayFailedRange = Omit<components['schemas']['ReplayFailed'], 'after'>;
export type CreateApplicationInput = components['schemas']['CreateApplication'];
export type UpdateApplicationInput = components['schemas']['UpdateApplication'];
export type PortalAccessInput = components['schemas']['PortalAccess'];

export interface PublishResult {
  id: string;
  eventType: string;
  acceptedAt: string;
  /** True when this idempotency key was seen before: the first publish's result. */
  duplicate: boolean;
  /** The idempotency key sent (the caller's, or the one generated for this publish). */
  idempotencyKey: string;
}

/**
 * Writes a publish into the caller's own database transaction (the outbox, see the SDK README).
 * The outbox module supplies it; the client only routes `publish(input, { transaction })` to it.
 */
export interface OutboxWriter<Transaction = never> {
  publish(input: PublishInput, transaction: Transaction): Promise<OutboxPublishResult>;
}

/** What `publish(input, { transaction })` answers: the event is written, not yet at Hookbase. */
export interface OutboxPublishResult {
  /** The outbox row's id: the event's idempotency key at Hookbase unless the input gave one. */
  id: string;
  idempotencyKey: string;
  /** True when the idempotency key was already in the outbox with the same type and payload. */
  duplicate: boolean;
}

export interface PublishOptions {
  /** Overrides the client's retry policy for this publish. */
  retry?: Partial<RetryPolicy>;
  /** Stops waiting and retrying when aborted. */
  signal?: AbortSignal;
  /** Writes into this open transaction instead of calling the API (needs `outbox` on the client). */
  transaction?: unknown;
}

export interface HookbaseOptions {
  /** Where the API listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** An API key (`Authorization: Bearer`), or the admin token for the admin operations. */
  apiKey: string;
  /** The organization the key belongs to: the default for the organization-scoped helpers. */
  organizationId?: string;
  /** Each request's time limit (default 10 s). */
  timeoutMs?: number;
  /** How `publish` retries 503, 429 and network errors (defaults: 5 attempts within 30 s). */
  retry?: Partial<RetryPolicy>;
  /** Another fetch (tests, proxies). */
  fetch?: typeof globalThis.fetch;
  /** Routes `publish(input, { transaction })` into the caller's transaction. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any writer's transaction type
  outbox?: OutboxWriter<any>;
}

type Json<O> = O extends { responses: infer R }
  ? {
      [S in keyof R]: S extends 200 | 201 | 202
        ? R[S] extends { content: { 'application/json': infer B } }
          ? B
          : never
        : never;
    }[keyof R]
  : never;
type Data<K extends keyof operations> = Json<operations[K]> extends { data: infer D } ? D : never;
type Query<K extends keyof operations> = operations[K]['parameters'] extends { query?: infer Q }
  ? NonNullable<Q>
  : never;

/** The result openapi-fetch answers; `data` on success, `error` otherwise. */
interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * A Hookbase client. `api` is the full typed API; the methods below wrap the common operations,
 * answer the response's `data` and throw `HookbaseApiError` (with the API's `code`) otherwise.
 */
export class Hookbase {
  readonly api: HookbaseApi;
  private readonly retryPolicy: RetryPolicy;

  constructor(private readonly options: HookbaseOptions) {
    if (!options.baseUrl) throw new TypeError('Hookbase: baseUrl is required');
    if (!options.apiKey) throw new TypeError('Hookbase: apiKey is required');
    const timeoutMs = options.timeoutMs ?? 10_000;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    this.retryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { authorization: `Bearer ${options.apiKey}` },
      fetch: async (request: Request) => {
        const signal = AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]);
        try {
          return await fetchImpl(new Request(request, { signal }));
        } catch (error) {
          if (request.signal.aborted) throw error;
          if (signal.aborted) {
            throw new HookbaseConnectionError(
              'TIMEOUT',
              `${request.method} ${request.url}: no answer within ${timeoutMs} ms`,
              { cause: error },
            );
          }
          const reason = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
          throw new HookbaseConnectionError(
            'NETWORK_ERROR',
            `${request.method} ${request.url}: ${reason}`,
            { cause: error },
          );
        }
      },
    });
  }

  get organizationId(): string | undefined {
    return this.options.organizationId;
  }

  private org(organizationId?: string): string {
    const id = organizationId ?? this.options.organizationId;
    if (!id) {
      throw new TypeError('Hookbase: this call needs organizationId (in the options or the call)');
    }
    return id;
  }

  /** The body of a success, or the typed error of anything else. */
  async unwrap<T>(request: Promise<FetchResult<T>>): Promise<T> {
    let result: FetchResult<T>;
    try {
      result = await request;
    } catch (error) {
      // A success whose body is not JSON: something other than Hookbase answered.
      if (error instanceof SyntaxError) {
        throw new HookbaseConnectionError(
          'INVALID_RESPONSE',
          `not the API's JSON: ${error.message}`,
          {
            cause: error,
          },
        );
      }
      throw error;
    }
    const { data, error, response } = result;
    if (response.ok) return data as T;
    throw apiErrorFrom(response, error);
  }

  // ---- events ----

  /**
   * Publishes one event. 503, 429 and network errors are retried with the same idempotency key
   * (generated when the input has none), honouring Retry-After, bounded by the retry policy; the
   * API answers a repeated key with the first result, so a retry never publishes twice.
   */
  async publish(
    input: PublishInput,
    options: PublishOptions & { transaction: object },
  ): Promise<OutboxPublishResult>;
  async publish(
    input: PublishInput,
    options?: PublishOptions & { transaction?: undefined },
  ): Promise<PublishResult>;
  async publish(
    input: PublishInput,
    options: PublishOptions = {},
  ): Promise<PublishResult | OutboxPublishResult> {
    if (options.transaction !== undefined) {
      if (!this.options.outbox) {
        throw new TypeError(
          'Hookbase: publish(input, { transaction }) needs the client created with an outbox',
        );
      }
      // Written in the caller's transaction: no request, so no retry; the relay sends it later.
      return this.options.outbox.publish(input, options.transaction);
    }
    const idempotencyKey = input.idempotencyKey ?? randomUUID();
    const body = { ...input, idempotencyKey };
    const data = await this.withRetry(options, () =>
      this.unwrap(this.api.POST('/v1/events', { body, signal: options.signal })),
    );
    return { ...(data.data as Omit<PublishResult, 'idempotencyKey'>), idempotencyKey };
  }

  /** Publishes several events (one result per event, in order), retried like `publish`. */
  async publishBatch(events: PublishInput[], options: PublishOptions = {}) {
    const body = {
      events: events.map((e) => ({ ...e, idempotencyKey: e.idempotencyKey ?? randomUUID() })),
    };
    const data = await this.withRetry(options, () =>
      this.unwrap(this.api.POST('/v1/events/batch', { body, signal: options.signal })),
    );
    return data.data;
  }

  /** Runs `attempt` until it succeeds, fails for good, or the policy says stop. */
  async withRetry<T>(options: PublishOptions, attempt: () => Promise<T>): Promise<T> {
    const policy = { ...this.retryPolicy, ...options.retry };
    const started = Date.now();
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (error) {
        const delay = retryDelay(policy, n, Date.now() - started, error);
        if (delay === undefined || options.signal?.aborted) throw error;
        await sleep(delay, options.signal);
      }
    }
  }

  /** Events newest first, without payloads; filters `applicationId`, `eventType`, `createdAfter`, `createdBefore`. */
  async listEvents(query: Query<'listEvents'> = {}, organizationId?: string) {
    const path = { orgId: this.org(organizationId) };
    return this.unwrap(
      this.api.GET('/api/organizations/{orgId}/events', { params: { path, query } }),
    );
  }

  async getEvent(eventId: string, organizationId?: string): Promise<Data<'getEvent'>> {
    const path = { orgId: this.org(organizationId), eventId };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/events/{eventId}', { params: { path } }),
      )
    ).data;
  }

  // ---- organizations ----

  async getOrganization(organizationId?: string): Promise<Data<'getOrganization'>> {
    const path = { orgId: this.org(organizationId) };
    return (await this.unwrap(this.api.GET('/api/organizations/{orgId}', { params: { path } })))
      .data;
  }

  /**
   * Erases an event's payload everywhere Hookbase stores it; the log keeps its rows, waiting
   * messages are dead-lettered (payload_purged) and replays of it are refused.
   */
  async purgeEventPayload(
    eventId: string,
    organizationId?: string,
  ): Promise<Data<'purgeEventPayload'>> {
    const path = { orgId: this.org(organizationId), eventId };
    return (
      await this.unwrap(
        this.api.DELETE('/api/organizations/{orgId}/events/{eventId}/payload', {
          params: { path },
        }),
      )
    ).data;
  }

  // ---- applications (every appId takes the id or the uid) ----

  async listApplications(query: Query<'listApplications'> = {}, organizationId?: string) {
    const path = { orgId: this.org(organizationId) };
    return this.unwrap(
      this.api.GET('/api/organizations/{orgId}/applications', { params: { path, query } }),
    );
  }

  async createApplication(
    input: CreateApplicationInput,
    organizationId?: string,
  ): Promise<Data<'createApplication'>> {
    const path = { orgId: this.org(organizationId) };
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/applications', { params: { path }, body: input }),
      )
    ).data;
  }

  async getApplication(appId: string, organizationId?: string): Promise<Data<'getApplication'>> {
    const path = { orgId: this.org(organizationId), appId };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/applications/{appId}', { params: { path } }),
      )
    ).data;
  }

  async updateApplication(
    appId: string,
    input: UpdateApplicationInput,
    organizationId?: string,
  ): Promise<Data<'updateApplication'>> {
    const path = { orgId: this.org(organizationId), appId };
    return (
      await this.unwrap(
        this.api.PATCH('/api/organizations/{orgId}/applications/{appId}', {
          params: { path },
          body: input,
        }),
      )
    ).data;
  }

  /** Deletes the application and its endpoints (their queued messages are dead-lettered). */
  async deleteApplication(
    appId: string,
    organizationId?: string,
  ): Promise<Data<'deleteApplication'>> {
    const path = { orgId: this.org(organizationId), appId };
    return (
      await this.unwrap(
        this.api.DELETE('/api/organizations/{orgId}/applications/{appId}', { params: { path } }),
      )
    ).data;
  }

  /** A portal token for the application and the link that opens its portal (token in the fragment). */
  async createPortalAccess(
    appId: string,
    input: Partial<PortalAccessInput> = {},
    organizationId?: string,
  ): Promise<Data<'createPortalAccess'>> {
    const path = { orgId: this.org(organizationId), appId };
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/applications/{appId}/portal-access', {
          params: { path },
          // Both fields have defaults on the server.
          body: input as PortalAccessInput,
        }),
      )
    ).data;
  }

  /** Revokes every portal token of the application. */
  async revokePortalAccess(
    appId: string,
    organizationId?: string,
  ): Promise<Data<'revokePortalAccess'>> {
    const path = { orgId: this.org(organizationId), appId };
    return (
      await this.unwrap(
        this.api.DELETE('/api/organizations/{orgId}/applications/{appId}/portal-access', {
          params: { path },
        }),
      )
    ).data;
  }

  /** The last hour of the application's live endpoints together (attempts per minute, success rate). */
  async getApplicationStats(
    appId: string,
    organizationId?: string,
  ): Promise<Data<'getApplicationStats'>> {
    const path = { orgId: this.org(organizationId), appId };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/applications/{appId}/stats', {
          params: { path },
        }),
      )
    ).data;
  }

  /**
   * Copies the failures of every endpoint of the application in one id order, as `replayFailed`
   * does for one; pass the answer's `nextAfter` back as `after` to go on.
   */
  async replayApplicationFailed(
    appId: string,
    range?: string | (ReplayFailedRange & { after?: string }),
    organizationId?: string,
  ): Promise<Data<'replayApplicationFailedMessages'>> {
    const path = { orgId: this.org(organizationId), appId };
    const body = typeof range === 'string' ? { since: range } : (range ?? {});
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/applications/{appId}/replay-failed', {
          params: { path },
          body,
        }),
      )
    ).data;
  }

  // ---- endpoints ----

  async listEndpoints(
    organizationId?: string,
    query: Query<'listEndpoints'> = {},
  ): Promise<Data<'listEndpoints'>> {
    const path = { orgId: this.org(organizationId) };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/webhook-endpoints', { params: { path, query } }),
      )
    ).data;
  }

  async getEndpoint(endpointId: string, organizationId?: string): Promise<Data<'getEndpoint'>> {
    const path = { orgId: this.org(organizationId), endpointId };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/webhook-endpoints/{endpointId}', {
          params: { path },
        }),
      )
    ).data;
  }

  async createEndpoint(
    input: CreateEndpointInput,
    organizationId?: string,
  ): Promise<Data<'createEndpoint'>> {
    const path = { orgId: this.org(organizationId) };
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/webhook-endpoints', {
          params: { path },
          body: input,
        }),
      )
    ).data;
  }

  async updateEndpoint(
    endpointId: string,
    input: UpdateEndpointInput,
    organizationId?: string,
  ): Promise<Data<'updateEndpoint'>> {
    const path = { orgId: this.org(organizationId), endpointId };
    return (
      await this.unwrap(
        this.api.PATCH('/api/organizations/{orgId}/webhook-endpoints/{endpointId}', {
          params: { path },
          body: input,
        }),
      )
    ).data;
  }

  async deleteEndpoint(endpointId: string, organizationId?: string): Promise<void> {
    const path = { orgId: this.org(organizationId), endpointId };
    await this.unwrap(
      this.api.DELETE('/api/organizations/{orgId}/webhook-endpoints/{endpointId}', {
        params: { path },
      }),
    );
  }

  async getEndpointSecret(endpointId: string, organizationId?: string): Promise<string> {
    const path = { orgId: this.org(organizationId), endpointId };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/webhook-endpoints/{endpointId}/secret', {
          params: { path },
        }),
      )
    ).data.key;
  }

  async getFifoState(
    endpointId: string,
    organizationId?: string,
  ): Promise<Data<'getEndpointFifoState'>> {
    const path = { orgId: this.org(organizationId), endpointId };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/webhook-endpoints/{endpointId}/fifo-state', {
          params: { path },
        }),
      )
    ).data;
  }

  /** A polling endpoint's next messages after `cursor` and the cursor to pass next. */
  async poll(endpointId: string, query: Query<'pollEndpoint'> = {}, organizationId?: string) {
    const path = { orgId: this.org(organizationId), endpointId };
    return this.unwrap(
      this.api.GET('/api/organizations/{orgId}/webhook-endpoints/{endpointId}/poll', {
        params: { path, query },
      }),
    );
  }

  /** Copies the endpoint's failures; `range` is a `since` time, or `{ since?, until?, eventTypes? }`. */
  async replayFailed(
    endpointId: string,
    range?: string | ReplayFailedRange,
    organizationId?: string,
  ): Promise<Data<'replayFailedMessages'>> {
    const path = { orgId: this.org(organizationId), endpointId };
    const body = typeof range === 'string' ? { since: range } : (range ?? {});
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/webhook-endpoints/{endpointId}/replay-failed', {
          params: { path },
          body,
        }),
      )
    ).data;
  }

  /** Whether an event like this would pass the endpoint's types, channels and filter. */
  async testEndpointFilter(
    endpointId: string,
    input: FilterTestInput,
    organizationId?: string,
  ): Promise<Data<'testEndpointFilter'>> {
    const path = { orgId: this.org(organizationId), endpointId };
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/webhook-endpoints/{endpointId}/filter/test', {
          params: { path },
          body: input,
        }),
      )
    ).data;
  }

  // ---- event types ----

  async listEventTypes(query: Query<'listEventTypes'> = {}, organizationId?: string) {
    const path = { orgId: this.org(organizationId) };
    return this.unwrap(
      this.api.GET('/api/organizations/{orgId}/event-types', { params: { path, query } }),
    );
  }

  async getEventType(name: string, organizationId?: string): Promise<Data<'getEventType'>> {
    const path = { orgId: this.org(organizationId), name };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/event-types/{name}', { params: { path } }),
      )
    ).data;
  }

  async createEventType(
    input: CreateEventTypeInput,
    organizationId?: string,
  ): Promise<Data<'createEventType'>> {
    const path = { orgId: this.org(organizationId) };
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/event-types', { params: { path }, body: input }),
      )
    ).data;
  }

  async updateEventType(
    name: string,
    input: UpdateEventTypeInput,
    organizationId?: string,
  ): Promise<Data<'updateEventType'>> {
    const path = { orgId: this.org(organizationId), name };
    return (
      await this.unwrap(
        this.api.PATCH('/api/organizations/{orgId}/event-types/{name}', {
          params: { path },
          body: input,
        }),
      )
    ).data;
  }

  async deleteEventType(name: string, organizationId?: string): Promise<void> {
    const path = { orgId: this.org(organizationId), name };
    await this.unwrap(
      this.api.DELETE('/api/organizations/{orgId}/event-types/{name}', { params: { path } }),
    );
  }

  /** Creates or updates one type per entry of an OpenAPI 3.1 document's `webhooks`. */
  async importEventTypes(
    document: Record<string, unknown>,
    organizationId?: string,
  ): Promise<Data<'importEventTypes'>> {
    const path = { orgId: this.org(organizationId) };
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/event-types/import', {
          params: { path },
          body: document,
        }),
      )
    ).data;
  }

  async setEventTypePolicy(
    eventTypePolicy: EventTypePolicy,
    organizationId?: string,
  ): Promise<Data<'setEventTypePolicy'>> {
    const path = { orgId: this.org(organizationId) };
    return (
      await this.unwrap(
        this.api.PATCH('/api/organizations/{orgId}/event-type-policy', {
          params: { path },
          body: { eventTypePolicy },
        }),
      )
    ).data;
  }

  // ---- messages and DLQ ----

  async listMessages(query: Query<'listMessages'> = {}, organizationId?: string) {
    const path = { orgId: this.org(organizationId) };
    return this.unwrap(
      this.api.GET('/api/organizations/{orgId}/messages', { params: { path, query } }),
    );
  }

  async getMessage(messageId: string, organizationId?: string): Promise<Data<'getMessage'>> {
    const path = { orgId: this.org(organizationId), messageId };
    return (
      await this.unwrap(
        this.api.GET('/api/organizations/{orgId}/messages/{messageId}', { params: { path } }),
      )
    ).data;
  }

  async replayMessage(messageId: string, organizationId?: string): Promise<Data<'replayMessage'>> {
    const path = { orgId: this.org(organizationId), messageId };
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/messages/{messageId}/replay', {
          params: { path },
        }),
      )
    ).data;
  }

  async listDlq(query: Query<'listDlq'> = {}, organizationId?: string) {
    const path = { orgId: this.org(organizationId) };
    return this.unwrap(this.api.GET('/api/organizations/{orgId}/dlq', { params: { path, query } }));
  }

  async retryDlqEntry(dlqId: string, organizationId?: string): Promise<Data<'retryDlqEntry'>> {
    const path = { orgId: this.org(organizationId), dlqId };
    return (
      await this.unwrap(
        this.api.POST('/api/organizations/{orgId}/dlq/{dlqId}/retry', { params: { path } }),
      )
    ).data;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export { HookbaseApiError, HookbaseConnectionError };
