import { createHash, hkdfSync } from 'node:crypto';
import { z } from 'zod';
import { NoProxyRule, organizationShareSlots, parseDuration, parseNoProxy } from '@hookbase/domain';

/**
 * Hookbase's configuration: read from the environment once, at boot, validated into one typed
 * object. Nothing else reads process.env. Every variable carries its description (`.describe`):
 * `npm run docs:generate` writes the configuration reference (docs/reference/configuration.md)
 * from them, and a unit test fails when that page and this schema differ.
 */

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const KEY_MESSAGE = 'must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)';
const isKey = (text: string) => BASE64.test(text) && Buffer.from(text, 'base64').length === 32;
// An AES-256 key for cloud endpoints' credentials at rest, in base64.
const credentialsKey = z.string().trim().refine(isKey, KEY_MESSAGE);

/** The longest admin token accepted, so no bearer string longer than this is ever read. */
export const MAX_ADMIN_TOKEN_LENGTH = 256;

/** Most events in one batch request (REST or gRPC) unless HOOKBASE_MAX_BATCH_EVENTS says otherwise. */
export const DEFAULT_MAX_BATCH_EVENTS = 500;

export const envSchema = z.object({
  HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe("Address the HTTP services (and gRPC ingest, and a worker's ops server) listen on."),
  PORT: int(0, 65535).default(3000).describe('HTTP port; `0` picks a free one.'),
  // gRPC ingest (hookbase.v1.Ingest) in the processes that serve ingest; 0 picks a free port,
  // -1 turns it off.
  HOOKBASE_GRPC_PORT: int(-1, 65535)
    .default(50051)
    .describe(
      'gRPC ingest (`hookbase.v1.Ingest`) port in `ingest` and `standalone`; `0` picks a free one, `-1` turns it off.',
    ),
  // Health and metrics of a worker without HTTP (fan-out, dispatcher, DLQ handler) on a small
  // HTTP server of its own; 0 picks a free port, -1 (the default) turns it off.
  HOOKBASE_OPS_PORT: int(-1, 65535)
    .default(-1)
    .describe(
      'Health (`/health/live`, `/health/ready`) and `/metrics` of a worker without HTTP (`fanout`, `dispatcher`, `dlq-handler`) on a small server of its own; `0` picks a free port, `-1` turns it off. HTTP services answer these routes on `PORT`.',
    ),
  // Prometheus metrics: false collects and registers nothing, and `/metrics` answers 404.
  HOOKBASE_METRICS: bool
    .default(true)
    .describe(
      '`false` turns Prometheus metrics off: nothing is collected and `/metrics` answers 404 `ROUTE_NOT_FOUND`.',
    ),
  // An endpoint id label on per-attempt metrics: off, since a tenant may have thousands.
  HOOKBASE_METRICS_ENDPOINT_LABELS: bool
    .default(false)
    .describe(
      'Adds an `endpoint_id` label to `hookbase_attempts_total` (one series per endpoint, so off by default).',
    ),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .default('postgres://hookbase:hookbase@127.0.0.1:54329/hookbase')
    .describe(
      'PostgreSQL connection string. `npm start` and `npm test` use the database it names when it answers instead of starting their own.',
    ),
  // At least 2: migrations hold an advisory lock on one connection while running on another.
  DATABASE_POOL_SIZE: int(2, 200)
    .default(10)
    .describe(
      'PostgreSQL connections per process (at least 2: migrations hold a lock on one while running on another).',
    ),
  KAFKA_BROKERS: z
    .string()
    .regex(/^[^\s,]+:\d+(,[^\s,]+:\d+)*$/, 'must be host:port[,host:port...]')
    .default('127.0.0.1:19092')
    .describe(
      'Comma-separated `host:port` list of Kafka brokers. `npm start` and `npm test` use it instead of starting a broker when it answers.',
    ),
  HOOKBASE_KAFKA_CLIENT_ID: z
    .string()
    .min(1)
    .default('hookbase')
    .describe('Prefix of the Kafka client ids.'),
  // How soon a crashed consumer's partitions move to another (broker minimum: 6000).
  HOOKBASE_KAFKA_SESSION_TIMEOUT_MS: int(6_000, 300_000)
    .default(30_000)
    .describe(
      "How soon a crashed consumer's partitions move to another process (the broker's minimum is 6000).",
    ),
  HOOKBASE_KAFKA_PRODUCER: z
    .enum(['kafkajs', 'platformatic'])
    .default('platformatic')
    .describe(
      'Kafka client that produces records: `platformatic` (`@platformatic/kafka`) or `kafkajs`. Both are idempotent with `acks=all` and put a key on the same partition, so processes of either kind may run side by side.',
    ),
  HOOKBASE_KAFKA_CONSUMER: z
    .enum(['kafkajs', 'platformatic'])
    .default('platformatic')
    .describe(
      "Kafka client that reads the fan-out's, the dispatcher's and the DLQ handler's topics: `platformatic` (`@platformatic/kafka`, through Hookbase's own fetch loop, which leaves a partition whose read-ahead is full out of its fetches while the others are read) or `kafkajs` (a new record on a full partition holds up every partition's reading). Both join the same consumer groups with the same assignor and commit the same offsets, so processes of either kind may run side by side.",
    ),
  HOOKBASE_EVENTS_PARTITIONS: int(1, 10_000)
    .optional()
    .describe(
      'Partitions of the events topic when it is created (by the Helm install Job or the first service to start; default 6). Fan-out replicas beyond it get no work. An existing topic is never changed.',
    ),
  HOOKBASE_DELIVERIES_PARTITIONS: int(1, 10_000)
    .optional()
    .describe(
      'Partitions of the deliveries topic when it is created (default 12). Dispatcher replicas beyond it get no work. Never changed afterwards: more partitions would move endpoints to other partitions and break FIFO order.',
    ),
  HOOKBASE_DLQ_PARTITIONS: int(1, 10_000)
    .optional()
    .describe('Partitions of the DLQ topic when it is created (default 3).'),
  HOOKBASE_KAFKA_REPLICATION_FACTOR: int(-1, 32)
    .refine((n) => n !== 0, 'must be -1 (the broker default) or at least 1')
    .default(-1)
    .describe(
      'Replication factor of the topics when they are created; `-1` takes the broker default.',
    ),
  HOOKBASE_TOPIC_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'letters, digits, . _ - only')
    .default('hookbase')
    .describe(
      'Topics are `<prefix>.events`, `<prefix>.deliveries`, `<prefix>.dlq`; consumer groups `<prefix>.<service>`.',
    ),
  HOOKBASE_ADMIN_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .max(MAX_ADMIN_TOKEN_LENGTH, `must be at most ${MAX_ADMIN_TOKEN_LENGTH} characters`)
    .regex(/^\S+$/, 'must not contain whitespace')
    .optional()
    .describe(
      'Bearer token of the administrator (organizations and API keys), 16 to 256 characters without whitespace. Required by `api` and `standalone`; `npm start` generates one into `.data/admin-token` when none is given.',
    ),
  HOOKBASE_ALLOW_PRIVATE_TARGETS: bool
    .default(false)
    .describe(
      'Allows endpoint URLs and cloud `config.endpoint` overrides on private, loopback or link-local addresses. When off, names are resolved when saved and again at every connection. `npm start` turns it on.',
    ),
  HOOKBASE_INGEST_ACK_TIMEOUT_MS: int(100, 120_000)
    .default(5_000)
    .describe(
      "How long ingest waits for Kafka's acknowledgement before answering `503` with `Retry-After` (the event may still be stored: retry with the same idempotency key).",
    ),
  HOOKBASE_MAX_BATCH_EVENTS: int(1, 10_000)
    .default(DEFAULT_MAX_BATCH_EVENTS)
    .describe('Most events in one `POST /v1/events/batch` or gRPC `PublishBatch`.'),
  HOOKBASE_PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe(
      'The address users reach Hookbase at (scheme, host, optional path), for the portal links it hands out; unset: the address of the request that asked for the link.',
    ),
  HOOKBASE_MAX_PAYLOAD_BYTES: int(1024, 4 * 1024 * 1024)
    .default(256 * 1024)
    .describe('Largest request body in bytes; larger is `413 PAYLOAD_TOO_LARGE`.'),
  HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES: int(1024, 16 * 1024 * 1024 * 1024)
    .default(64 * 1024 * 1024)
    .describe(
      'Bytes of request bodies a process serves at once, HTTP and gRPC together: each HTTP request counted by its `Content-Length` (the largest body allowed when it declares none) from its arrival to its answer, each gRPC call by its message. A request beyond it is answered `503 SERVICE_UNAVAILABLE` with `Retry-After: 1` before its body is read (gRPC: `UNAVAILABLE`, `retry-after` 1), so that a burst of large requests cannot exhaust the memory; one request is always served when no other body is. The process holds a few times these bytes while it parses, checks and produces them.',
    ),
  HOOKBASE_DELIVERY_TIMEOUT_MS: int(100, 300_000)
    .default(15_000)
    .describe('Total time for one HTTP attempt (response headers and body).'),
  HOOKBASE_CONNECT_TIMEOUT_MS: int(100, 60_000)
    .default(5_000)
    .describe('Time to connect to a receiver.'),
  HOOKBASE_EGRESS_PROXY: z
    .string()
    .trim()
    .refine((raw) => URL.canParse(raw) && new URL(raw).protocol === 'http:', {
      message: 'must be an http:// proxy URL such as http://proxy.internal:3128',
    })
    .optional()
    .describe(
      'An HTTP proxy (`http://[user:password@]host:port`) that http deliveries, test sends, OAuth2 token requests, the AWS kinds (SQS, SNS, EventBridge, S3) and the Pub/Sub gRPC channel go through with CONNECT: the usual way to give Hookbase one static source address.',
    ),
  HOOKBASE_EGRESS_NO_PROXY: z
    .string()
    .default('')
    .describe(
      'Destinations that bypass the egress proxy: comma-separated host names (with their subdomains), addresses, optionally `:port`, or `*` for all.',
    ),
  HOOKBASE_OPERATIONAL_RELAY_MS: int(50, 60_000)
    .default(1_000)
    .describe(
      'How often each process moves operational events waiting in PostgreSQL (written with the change that caused them) onto the events topic; a Kafka outage delays them and loses none.',
    ),
  HOOKBASE_OPERATIONAL_FAILING_AFTER: int(1, 10_000)
    .default(5)
    .describe(
      "After this many failed attempts in a row, an endpoint's organization gets one `message.attempt.failing` operational event (once per streak).",
    ),
  HOOKBASE_OPERATIONAL_FIFO_BLOCKED_AFTER: z
    .string()
    .default('15m')
    .refine((text) => typeof parseDuration(text) === 'number', {
      message: 'must be a duration such as 15m, 1h, 90s or 500ms',
    })
    .transform((text) => parseDuration(text) as number)
    .describe(
      'A FIFO queue held this long (its head failing, or held by a paused or disabled endpoint, an open circuit or a stopped worker) sends the `fifo.queue.blocked` operational event, and `fifo.queue.unblocked` once it moves: `15m`, `1h`, `90s`, `500ms`.',
    ),
  HOOKBASE_FIFO_BLOCKED_SWEEP_MS: int(100, 600_000)
    .default(10_000)
    .describe(
      'How often each dispatcher looks for blocked FIFO queues (for `fifo.queue.blocked` and `fifo.queue.unblocked`); the episodes are kept in PostgreSQL, one event each whatever the number of dispatchers.',
    ),
  HOOKBASE_AUTO_DISABLE_AFTER: z
    .string()
    .default('5d')
    .refine((text) => parseDuration(text) !== undefined, {
      message: 'must be a duration such as 5d, 12h, 30m, 90s or 1500ms, or off',
    })
    .transform((text) => parseDuration(text) ?? null)
    .describe(
      'How long an endpoint may fail without one success before it is disabled (reason `failing`), unless its organization sets its own period: `5d`, `12h`, `30m`, `90s`, `1500ms`, or `off`.',
    ),
  HOOKBASE_ENDPOINT_CONCURRENCY: int(1, 1000)
    .default(10)
    .describe('Attempts in flight per endpoint, per dispatcher.'),
  HOOKBASE_ENDPOINT_QUEUE_WAIT_MS: int(10, 3_600_000)
    .default(1000)
    .describe(
      "How long a message of a non-FIFO endpoint may wait while all the endpoint's attempts are in flight (HOOKBASE_ENDPOINT_CONCURRENCY of them) before it is held on the retry schedule, no attempt used, until about when the endpoint has worked through the messages ahead of it. So a slow endpoint's backlog waits in PostgreSQL rather than in its partition's read-ahead window, where it would hold up the other endpoints of the partition.",
    ),
  HOOKBASE_DISPATCH_CONCURRENCY: int(1, 10_000)
    .default(256)
    .describe(
      'Attempts in flight per dispatcher; also the most connections it opens to one receiver host.',
    ),
  HOOKBASE_DISPATCH_READ_AHEAD: int(10, 100_000)
    .default(1000)
    .describe(
      'Messages a dispatcher may have read from one partition of the deliveries topic and not yet finished; once it is full, that partition is read again when a quarter of it is free, and a fetch that brings more records than there is room for is taken in part (the rest are read again). The messages of a slow endpoint wait here (up to HOOKBASE_ENDPOINT_QUEUE_WAIT_MS behind its attempts in flight) while the others of their partition go on; each one costs memory.',
    ),
  HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES: int(0, 4 * 1024 * 1024)
    .default(0)
    .describe(
      "Largest payload, in bytes of JSON, that the fan-out writes into each of an event's records on the deliveries topic. A larger one (every one, with `0`) stays only with the event in PostgreSQL, and the dispatcher reads it there, once for the event's records it takes in together. While dispatchers of a version without this setting still run (a rolling upgrade), set it to `4194304`: they read only records with their payload.",
    ),
  HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES: int(0, 1024 * 1024 * 1024)
    .default(32 * 1024 * 1024)
    .describe(
      "Bytes of payloads (as JSON) a dispatcher may hold for the messages it has read from the stream and not yet sent; an event's payload counts once for all its messages. A message whose payload does not fit waits without it, and its payload is read from the event when its attempt is about to start, so the read-ahead's memory stays bounded whatever the payloads' size. Each claim of retries reads its payloads within a quarter of it (two claims are under way at most). `0` reads every payload at its attempt.",
    ),
  // Percent of the dispatch pool any organization may always hold; beyond it an organization
  // borrows only while that much stays free for the others. 100 turns the sharing off.
  HOOKBASE_DISPATCH_ORGANIZATION_SHARE: int(1, 100)
    .default(25)
    .describe(
      'Percent of `HOOKBASE_DISPATCH_CONCURRENCY` every organization may always have in flight; beyond it an organization borrows only while that much stays free for the others. `100` turns sharing off.',
    ),
  HOOKBASE_CIRCUIT_FAILURE_THRESHOLD: int(1, 1000)
    .default(10)
    .describe(
      "Consecutive retryable failures (network, timeout, 408, 425, 429, 5xx) that open an endpoint's circuit.",
    ),
  HOOKBASE_CIRCUIT_COOLDOWN_MS: int(1_000, 3_600_000)
    .default(30_000)
    .describe('How long an open circuit refuses before one probe is let through.'),
  // Days of message log per plan (fractions allowed); finished messages, their attempts, events,
  // DLQ entries and idempotency keys older than this are pruned.
  HOOKBASE_RETENTION_DAYS_FREE: z.coerce
    .number()
    .positive()
    .max(3650)
    .default(7)
    .describe(
      'Days of message log kept on plan `free` (fractions allowed): finished messages, attempts, events, DLQ entries and idempotency keys older than this are pruned; unfinished work is kept.',
    ),
  HOOKBASE_RETENTION_DAYS_PRO: z.coerce
    .number()
    .positive()
    .max(3650)
    .default(30)
    .describe('Days of message log kept on plan `pro` (as `HOOKBASE_RETENTION_DAYS_FREE`).'),
  HOOKBASE_RETENTION_DAYS_BUSINESS: z.coerce
    .number()
    .positive()
    .max(3650)
    .default(90)
    .describe('Days of message log kept on plan `business` (as `HOOKBASE_RETENTION_DAYS_FREE`).'),
  HOOKBASE_RETENTION_INTERVAL_MS: int(500, 86_400_000)
    .default(3_600_000)
    .describe('How often retention runs (one dispatcher at a time, under a PostgreSQL lock).'),
  HOOKBASE_RETRY_POLL_MS: int(50, 60_000)
    .default(500)
    .describe('How often the retry schedule is polled for due messages.'),
  HOOKBASE_HOLD_RECHECK_MS: int(100, 600_000)
    .default(5_000)
    .describe(
      'How often a message held for a paused or disabled endpoint is checked again; the longest a waiting FIFO lane goes without re-reading its endpoint.',
    ),
  // FIFO lanes: how long a lane's head waits after its worker stopped before another sends it
  // again, and how often dispatchers look for lanes that no worker runs.
  HOOKBASE_FIFO_LEASE_MS: int(1_000, 3_600_000)
    .default(300_000)
    .describe(
      "A FIFO lane's lease: after its worker stops mid-delivery, the head is sent again once this has passed (never by two workers at once).",
    ),
  HOOKBASE_FIFO_SWEEP_MS: int(100, 60_000)
    .default(1_000)
    .describe(
      'How often each dispatcher looks for FIFO lanes with queued messages that no worker runs.',
    ),
  HOOKBASE_RESPONSE_EXCERPT_BYTES: int(0, 65_536)
    .default(4096)
    .describe("How much of a receiver's response body is kept with the attempt."),
  HOOKBASE_SHUTDOWN_DRAIN_MS: int(0, 600_000)
    .default(25_000)
    .describe(
      "On SIGTERM or SIGINT a service stops taking work (readiness false, new HTTP requests `503`) and lets the work under way finish for at most this long before it commits, hands its FIFO lanes back and exits 0. Keep it below the orchestrator's grace period (the Helm chart adds 10 s).",
    ),
  HOOKBASE_API_KEY_CACHE_MS: int(0, 600_000)
    .default(10_000)
    .describe(
      'How long a key that proved valid is remembered (by its hash) before it is checked again: a revoked key works at most this long in other processes, and a plan change reaches their limits within it. A key in use is checked again in the background during the last quarter of this time, so its requests do not wait for the check.',
    ),
  HOOKBASE_EVENT_TYPE_CACHE_MS: int(0, 600_000)
    .default(1_000)
    .describe(
      "How long a process trusts its copy of an organization's event type policy and catalog: a change reaches every replica within it.",
    ),
  // Abuse limits (ADR 0015): valid keys remembered, failed authentications per client address,
  // events and management requests per API key by plan, endpoints per organization by plan,
  // replay-failed copies per call and per organization and minute.
  HOOKBASE_API_KEY_CACHE_SIZE: int(1, 1_000_000)
    .default(10_000)
    .describe('Most valid keys remembered per process (the oldest goes first).'),
  HOOKBASE_AUTH_FAILURES_PER_MINUTE: int(1, 1_000_000)
    .default(30)
    .describe(
      'Failed authentications per client address (IPv6: per /64) and minute, per process; past it the address gets `429` without a lookup, except for keys it used within the cache time and the admin token.',
    ),
  HOOKBASE_INGEST_EVENTS_PER_SECOND_FREE: int(1, 10_000_000)
    .default(1_000)
    .describe(
      'Events per API key and second on plan `free`, per process, REST and gRPC together; a batch counts its events and is refused whole. At least `HOOKBASE_MAX_BATCH_EVENTS`.',
    ),
  HOOKBASE_INGEST_EVENTS_PER_SECOND_PRO: int(1, 10_000_000)
    .default(5_000)
    .describe('Events per API key and second on plan `pro` (as the `_FREE` variable).'),
  HOOKBASE_INGEST_EVENTS_PER_SECOND_BUSINESS: int(1, 10_000_000)
    .default(20_000)
    .describe('Events per API key and second on plan `business` (as the `_FREE` variable).'),
  HOOKBASE_API_REQUESTS_PER_SECOND_FREE: int(1, 1_000_000)
    .default(100)
    .describe(
      'Management requests (`/api/...`) per API key and second on plan `free`, per process.',
    ),
  HOOKBASE_API_REQUESTS_PER_SECOND_PRO: int(1, 1_000_000)
    .default(500)
    .describe('Management requests per API key and second on plan `pro`, per process.'),
  HOOKBASE_API_REQUESTS_PER_SECOND_BUSINESS: int(1, 1_000_000)
    .default(2_000)
    .describe('Management requests per API key and second on plan `business`, per process.'),
  HOOKBASE_MAX_ENDPOINTS_FREE: int(1, 10_000_000)
    .default(100)
    .describe(
      'Endpoints of every kind (not deleted) per organization on plan `free`; one more is `403 ENDPOINT_LIMIT_REACHED`.',
    ),
  HOOKBASE_MAX_ENDPOINTS_PRO: int(1, 10_000_000)
    .default(1_000)
    .describe('Endpoints per organization on plan `pro`.'),
  HOOKBASE_MAX_ENDPOINTS_BUSINESS: int(1, 10_000_000)
    .default(10_000)
    .describe('Endpoints per organization on plan `business`.'),
  HOOKBASE_REPLAY_FAILED_MAX_PER_CALL: int(1, 100_000)
    .default(1_000)
    .describe(
      "Most copies one `replay-failed` call makes; when more follow, its answer's `nextAfter` is sent back as `after` to go on.",
    ),
  HOOKBASE_REPLAY_FAILED_PER_MINUTE: int(1, 10_000_000)
    .default(10_000)
    .describe(
      'Most `replay-failed` copies per organization and minute, per process; none left is `429` with `Retry-After`.',
    ),
  HOOKBASE_RUN_MIGRATIONS: bool
    .default(true)
    .describe(
      'Applies pending database migrations at boot (under an advisory lock, so services may boot together).',
    ),
  // Without a key, cloud endpoints that carry credentials are refused (the SDKs' default chains
  // still work); previous keys (comma-separated) still decrypt during a key rotation.
  HOOKBASE_CREDENTIALS_KEY: credentialsKey
    .optional()
    .describe(
      'AES-256-GCM key (32 bytes in base64, e.g. `openssl rand -base64 32`), the same for every service. Seals signing secrets and cloud credentials at rest and signs poll cursors. Required when `NODE_ENV=production`; `npm start` generates one into `.data/credentials-key`.',
    ),
  HOOKBASE_CREDENTIALS_PREVIOUS_KEYS: z
    .string()
    .refine(
      (list) => list.split(',').every((key) => isKey(key.trim())),
      `each comma-separated key ${KEY_MESSAGE}`,
    )
    .optional()
    .describe(
      'Comma-separated older keys that still open sealed secrets and credentials and still validate poll cursors during a key rotation.',
    ),
  LOG_LEVEL: z
    .enum(['error', 'warn', 'info', 'debug'])
    .default('info')
    .describe('The least severe log lines written: `error`, `warn`, `info` or `debug`.'),
  // One JSON object per line for log collectors; `npm start` asks for readable lines.
  LOG_FORMAT: z
    .enum(['json', 'pretty'])
    .default('json')
    .describe(
      '`json`: one JSON object per line on standard output; `pretty`: readable lines (what `npm start` asks for).',
    ),
  // The production switch (the Docker image sets it): keys that protect data at rest are required.
  NODE_ENV: z
    .string()
    .optional()
    .describe(
      '`production` (the Docker image sets it) makes every service refuse to start without `HOOKBASE_CREDENTIALS_KEY`.',
    ),
});

export interface HookbaseConfig {
  http: {
    host: string;
    port: number;
    maxPayloadBytes: number;
    /** Bytes of request bodies served at once; beyond them a request is answered 503. */
    inFlightBodyBytes: number;
    maxBatchEvents: number;
    /** Where users reach Hookbase, for portal links; undefined: the requesting address. */
    publicUrl: string | undefined;
    /** How long ingest waits for Kafka's acknowledgement before answering 503. */
    ackTimeoutMs: number;
  };
  /** gRPC ingest on http.host; port undefined when turned off. */
  grpc: { port: number | undefined };
  /** A worker's own health and metrics server on http.host; port undefined when turned off. */
  ops: { port: number | undefined };
  /** Prometheus metrics: collected at all, and whether per-attempt series carry the endpoint id. */
  metrics: { enabled: boolean; endpointLabels: boolean };
  database: { url: string; poolSize: number; runMigrations: boolean };
  kafka: {
    brokers: string[];
    clientId: string;
    topicPrefix: string;
    sessionTimeoutMs: number;
    /** The client behind KafkaProducer. */
    producer: 'kafkajs' | 'platformatic';
    /** The client behind every BatchConsumer. */
    consumer: 'kafkajs' | 'platformatic';
    /** How missing topics are created: partitions by topic suffix (unset: the catalog's). */
    topics: {
      partitions: Partial<Record<'events' | 'deliveries' | 'dlq', number>>;
      replicationFactor: number;
    };
  };
  auth: {
    adminToken: string | undefined;
    /** How long a key that proved valid is remembered, and how many are at most. */
    apiKeyCacheMs: number;
    apiKeyCacheSize: number;
    /** Failed authentications per client address (IPv6: per /64) in a minute before 429. */
    failuresPerMinute: number;
  };
  /**
   * How long an organization's event type policy and catalog (with its compiled schemas) are
   * trusted before being read again: a change made in another process applies within it.
   */
  eventTypes: { cacheMs: number };
  /** Abuse limits and quotas (ADR 0015), per plan where a plan applies. */
  limits: {
    /** Events accepted per API key and second (REST and gRPC; a batch counts its events). */
    ingestEventsPerSecond: Record<'free' | 'pro' | 'business', number>;
    /** Management API requests per API key and second. */
    apiRequestsPerSecond: Record<'free' | 'pro' | 'business', number>;
    /** Endpoints (not deleted, of every kind) per organization. */
    maxEndpoints: Record<'free' | 'pro' | 'business', number>;
    /** Copies one replay-failed call makes at most, and per organization in a minute. */
    replayFailed: { maxPerCall: number; perMinute: number };
  };
  delivery: {
    timeoutMs: number;
    connectTimeoutMs: number;
    allowPrivateTargets: boolean;
    /** The egress proxy of http deliveries, and who bypasses it; null: none. */
    egressProxy: { url: string; noProxy: NoProxyRule[] } | null;
    /** The default auto-disable period of failing endpoints; null: off. */
    autoDisableAfterMs: number | null;
    /** Failed attempts in a row that send message.attempt.failing (once per streak). */
    failingEventAfter: number;
    /** How long a FIFO queue is held before fifo.queue.blocked is sent. */
    fifoBlockedEventAfterMs: number;
    /** How often the dispatcher looks for blocked FIFO queues. */
    fifoBlockedSweepMs: number;
    /** How often waiting operational events are moved onto the events topic. */
    operationalRelayMs: number;
    endpointConcurrency: number;
    /** How long a message may wait behind its endpoint's own attempts before it is held. */
    endpointQueueWaitMs: number;
    dispatchConcurrency: number;
    /** Unfinished messages per partition of the deliveries topic before its reading waits. */
    readAheadPerPartition: number;
    /** Largest payload (bytes of JSON) the fan-out writes into each delivery record. */
    inlinePayloadBytes: number;
    /** Bytes of payloads the dispatcher may hold for messages read ahead of their attempts. */
    readAheadPayloadBytes: number;
    /**
     * Attempts in flight any organization may always hold (its share of `dispatchConcurrency`,
     * at least 1); beyond it, it borrows only while as many stay free for other organizations.
     */
    organizationShare: number;
    responseExcerptBytes: number;
    retryPollMs: number;
    holdRecheckMs: number;
    circuit: { failureThreshold: number; cooldownMs: number };
  };
  fifo: { leaseMs: number; sweepMs: number };
  /** An orderly stop: how long work under way may take to finish (see ShutdownCoordinator). */
  shutdown: { drainMs: number };
  /**
   * Encryption at rest of cloud endpoints' credentials (AES-256-GCM): the key (base64) that
   * encrypts, undefined when none is configured, and older keys that still decrypt.
   */
  credentials: { key: string | undefined; previousKeys: string[] };
  /** NODE_ENV=production: every service refuses to start without HOOKBASE_CREDENTIALS_KEY. */
  production: boolean;
  retention: { days: Record<'free' | 'pro' | 'business', number>; intervalMs: number };
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  /** `json`: one object per line (production); `pretty`: readable lines (`npm start`). */
  logFormat: 'json' | 'pretty';
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: Record<string, string | undefined>): HookbaseConfig {
  // An empty variable means "unset", as in most shells' `VAR= cmd` habits.
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`),
    );
  }
  const e = parsed.data;
  const ingestEventsPerSecond = {
    free: e.HOOKBASE_INGEST_EVENTS_PER_SECOND_FREE,
    pro: e.HOOKBASE_INGEST_EVENTS_PER_SECOND_PRO,
    business: e.HOOKBASE_INGEST_EVENTS_PER_SECOND_BUSINESS,
  };
  // A batch is counted whole: a limit below the largest batch would refuse every full batch.
  const tooLow = Object.entries(ingestEventsPerSecond)
    .filter(([, limit]) => limit < e.HOOKBASE_MAX_BATCH_EVENTS)
    .map(
      ([plan]) =>
        `HOOKBASE_INGEST_EVENTS_PER_SECOND_${plan.toUpperCase()}: must be at least HOOKBASE_MAX_BATCH_EVENTS (${e.HOOKBASE_MAX_BATCH_EVENTS}), or no full batch could ever pass`,
    );
  if (tooLow.length > 0) throw new ConfigError(tooLow);
  if (
    e.HOOKBASE_CREDENTIALS_PREVIOUS_KEYS !== undefined &&
    e.HOOKBASE_CREDENTIALS_KEY === undefined
  ) {
    throw new ConfigError([
      'HOOKBASE_CREDENTIALS_PREVIOUS_KEYS: needs HOOKBASE_CREDENTIALS_KEY (the key that encrypts)',
    ]);
  }
  const production = e.NODE_ENV === 'production';
  if (production && e.HOOKBASE_CREDENTIALS_KEY === undefined) {
    throw new ConfigError([
      'HOOKBASE_CREDENTIALS_KEY: required in production (NODE_ENV=production): it seals endpoint ' +
        'signing secrets and cloud credentials at rest and signs poll cursors; generate one with ' +
        '`openssl rand -base64 32` and give the same key to every service',
    ]);
  }
  return {
    http: {
      host: e.HOST,
      port: e.PORT,
      maxPayloadBytes: e.HOOKBASE_MAX_PAYLOAD_BYTES,
      inFlightBodyBytes: e.HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES,
      maxBatchEvents: e.HOOKBASE_MAX_BATCH_EVENTS,
      publicUrl: e.HOOKBASE_PUBLIC_URL,
      ackTimeoutMs: e.HOOKBASE_INGEST_ACK_TIMEOUT_MS,
    },
    grpc: { port: e.HOOKBASE_GRPC_PORT === -1 ? undefined : e.HOOKBASE_GRPC_PORT },
    ops: { port: e.HOOKBASE_OPS_PORT === -1 ? undefined : e.HOOKBASE_OPS_PORT },
    metrics: { enabled: e.HOOKBASE_METRICS, endpointLabels: e.HOOKBASE_METRICS_ENDPOINT_LABELS },
    database: {
      url: e.DATABASE_URL,
      poolSize: e.DATABASE_POOL_SIZE,
      runMigrations: e.HOOKBASE_RUN_MIGRATIONS,
    },
    kafka: {
      brokers: e.KAFKA_BROKERS.split(','),
      clientId: e.HOOKBASE_KAFKA_CLIENT_ID,
      topicPrefix: e.HOOKBASE_TOPIC_PREFIX,
      sessionTimeoutMs: e.HOOKBASE_KAFKA_SESSION_TIMEOUT_MS,
      producer: e.HOOKBASE_KAFKA_PRODUCER,
      consumer: e.HOOKBASE_KAFKA_CONSUMER,
      topics: {
        partitions: Object.fromEntries(
          Object.entries({
            events: e.HOOKBASE_EVENTS_PARTITIONS,
            deliveries: e.HOOKBASE_DELIVERIES_PARTITIONS,
            dlq: e.HOOKBASE_DLQ_PARTITIONS,
          }).filter(([, count]) => count !== undefined),
        ),
        replicationFactor: e.HOOKBASE_KAFKA_REPLICATION_FACTOR,
      },
    },
    auth: {
      adminToken: e.HOOKBASE_ADMIN_TOKEN,
      apiKeyCacheMs: e.HOOKBASE_API_KEY_CACHE_MS,
      apiKeyCacheSize: e.HOOKBASE_API_KEY_CACHE_SIZE,
      failuresPerMinute: e.HOOKBASE_AUTH_FAILURES_PER_MINUTE,
    },
    eventTypes: { cacheMs: e.HOOKBASE_EVENT_TYPE_CACHE_MS },
    limits: {
      ingestEventsPerSecond,
      apiRequestsPerSecond: {
        free: e.HOOKBASE_API_REQUESTS_PER_SECOND_FREE,
        pro: e.HOOKBASE_API_REQUESTS_PER_SECOND_PRO,
        business: e.HOOKBASE_API_REQUESTS_PER_SECOND_BUSINESS,
      },
      maxEndpoints: {
        free: e.HOOKBASE_MAX_ENDPOINTS_FREE,
        pro: e.HOOKBASE_MAX_ENDPOINTS_PRO,
        business: e.HOOKBASE_MAX_ENDPOINTS_BUSINESS,
      },
      replayFailed: {
        maxPerCall: e.HOOKBASE_REPLAY_FAILED_MAX_PER_CALL,
        perMinute: e.HOOKBASE_REPLAY_FAILED_PER_MINUTE,
      },
    },
    delivery: {
      timeoutMs: e.HOOKBASE_DELIVERY_TIMEOUT_MS,
      connectTimeoutMs: e.HOOKBASE_CONNECT_TIMEOUT_MS,
      allowPrivateTargets: e.HOOKBASE_ALLOW_PRIVATE_TARGETS,
      egressProxy: e.HOOKBASE_EGRESS_PROXY
        ? { url: e.HOOKBASE_EGRESS_PROXY, noProxy: parseNoProxy(e.HOOKBASE_EGRESS_NO_PROXY) }
        : null,
      autoDisableAfterMs: e.HOOKBASE_AUTO_DISABLE_AFTER,
      failingEventAfter: e.HOOKBASE_OPERATIONAL_FAILING_AFTER,
      fifoBlockedEventAfterMs: e.HOOKBASE_OPERATIONAL_FIFO_BLOCKED_AFTER,
      fifoBlockedSweepMs: e.HOOKBASE_FIFO_BLOCKED_SWEEP_MS,
      operationalRelayMs: e.HOOKBASE_OPERATIONAL_RELAY_MS,
      endpointConcurrency: e.HOOKBASE_ENDPOINT_CONCURRENCY,
      endpointQueueWaitMs: e.HOOKBASE_ENDPOINT_QUEUE_WAIT_MS,
      dispatchConcurrency: e.HOOKBASE_DISPATCH_CONCURRENCY,
      readAheadPerPartition: e.HOOKBASE_DISPATCH_READ_AHEAD,
      inlinePayloadBytes: e.HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES,
      readAheadPayloadBytes: e.HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES,
      organizationShare: organizationShareSlots(
        e.HOOKBASE_DISPATCH_CONCURRENCY,
        e.HOOKBASE_DISPATCH_ORGANIZATION_SHARE,
      ),
      responseExcerptBytes: e.HOOKBASE_RESPONSE_EXCERPT_BYTES,
      retryPollMs: e.HOOKBASE_RETRY_POLL_MS,
      holdRecheckMs: e.HOOKBASE_HOLD_RECHECK_MS,
      circuit: {
        failureThreshold: e.HOOKBASE_CIRCUIT_FAILURE_THRESHOLD,
        cooldownMs: e.HOOKBASE_CIRCUIT_COOLDOWN_MS,
      },
    },
    fifo: { leaseMs: e.HOOKBASE_FIFO_LEASE_MS, sweepMs: e.HOOKBASE_FIFO_SWEEP_MS },
    shutdown: { drainMs: e.HOOKBASE_SHUTDOWN_DRAIN_MS },
    credentials: {
      key: e.HOOKBASE_CREDENTIALS_KEY,
      previousKeys: (e.HOOKBASE_CREDENTIALS_PREVIOUS_KEYS ?? '')
        .split(',')
        .map((key) => key.trim())
        .filter(Boolean),
    },
    production,
    retention: {
      days: {
        free: e.HOOKBASE_RETENTION_DAYS_FREE,
        pro: e.HOOKBASE_RETENTION_DAYS_PRO,
        business: e.HOOKBASE_RETENTION_DAYS_BUSINESS,
      },
      intervalMs: e.HOOKBASE_RETENTION_INTERVAL_MS,
    },
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
  };
}

/** Services that manage organizations refuse to start without an admin token. */
export function requireAdminToken(config: HookbaseConfig): string {
  if (!config.auth.adminToken) {
    throw new ConfigError(['HOOKBASE_ADMIN_TOKEN: required by the management API']);
  }
  return config.auth.adminToken;
}

/**
 * The HMAC keys that sign and check poll cursors, the first signing: derived (HKDF-SHA256) from
 * HOOKBASE_CREDENTIALS_KEY and its previous keys, so a key rotation keeps the cursors already
 * handed out valid while the old key is listed. Without a credentials key (never in production)
 * they are derived from the admin token, which every process serving polls has; undefined when
 * neither is configured.
 */
export function pollCursorKeys(config: HookbaseConfig): Buffer[] | undefined {
  const secrets = config.credentials.key
    ? [config.credentials.key, ...config.credentials.previousKeys].map((key) =>
        Buffer.from(key, 'base64'),
      )
    : config.auth.adminToken
      ? [createHash('sha256').update(config.auth.adminToken, 'utf8').digest()]
      : undefined;
  return secrets?.map((secret) =>
    Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'hookbase poll cursor v1', 32)),
  );
}
