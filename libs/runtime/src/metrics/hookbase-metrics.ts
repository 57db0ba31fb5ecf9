import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DeliveryEvent, statusClass, TransitionSkipReason } from '@hookbase/domain';
import { IngestSurface, MetricRecorders } from './metric-recorders';

/** What `/metrics` answers (404 ROUTE_NOT_FOUND) when HOOKBASE_METRICS=false. */
export const METRICS_OFF_MESSAGE =
  'Metrics are turned off in this process (HOOKBASE_METRICS=false)';

/** A source of gauges measured when Prometheus scrapes (consumer lag, the PostgreSQL pool). */
export interface ScrapeSource {
  /** Sets this source's gauges on `metrics`; a failing source leaves them out, never the scrape. */
  collect(metrics: HookbaseMetrics): Promise<void>;
}

/**
 * The catalog of every Hookbase metric, in one registry per process: names with the `hookbase_`
 * prefix, `_total` counters, `_seconds` durations, labels of bounded cardinality (never an event
 * id or a URL; the endpoint id only when `HOOKBASE_METRICS_ENDPOINT_LABELS` turns it on). Node's
 * process metrics (CPU, heap, event loop lag) come with prom-client's standard names.
 */
export class HookbaseMetrics implements MetricRecorders {
  readonly registry = new Registry();
  private readonly sources: ScrapeSource[] = [];

  readonly eventsAcceptedTotal = new Counter({
    name: 'hookbase_events_accepted_total',
    help: 'Events accepted (stored in Kafka), by the surface they came in on.',
    labelNames: ['surface'] as const,
    registers: [this.registry],
  });
  readonly eventsRefusedTotal = new Counter({
    name: 'hookbase_events_refused_total',
    help: 'Events refused, by surface and reason (the error code, or why a Kafka record was set aside).',
    labelNames: ['surface', 'reason'] as const,
    registers: [this.registry],
  });
  readonly httpInFlightBodyBytes = new Gauge({
    name: 'hookbase_http_in_flight_body_bytes',
    help: 'Bytes of request bodies this process serves now (HTTP bodies by their declared length, gRPC messages by their size), each from its arrival to its answer; at most HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES, or one request alone.',
    registers: [this.registry],
  });
  readonly httpBodiesRefusedTotal = new Counter({
    name: 'hookbase_http_bodies_refused_total',
    help: 'Requests answered 503 (gRPC: UNAVAILABLE) without being served, because the bodies in flight would have passed HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES.',
    registers: [this.registry],
  });
  readonly publishDurationSeconds = new Histogram({
    name: 'hookbase_publish_duration_seconds',
    help: "From an event's publish to Kafka's acknowledgement (acks=all), by outcome.",
    labelNames: ['outcome'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly fanoutEventsTotal = new Counter({
    name: 'hookbase_fanout_events_total',
    help: 'Events the fan-out recorded with their recipients.',
    registers: [this.registry],
  });
  readonly fanoutMessagesTotal = new Counter({
    name: 'hookbase_fanout_messages_total',
    help: 'Messages the fan-out sent for delivery (one per recipient endpoint, polling ones excepted).',
    registers: [this.registry],
  });
  readonly attemptsTotal: Counter<string>;
  readonly attemptDurationSeconds = new Histogram({
    name: 'hookbase_attempt_duration_seconds',
    help: 'How long one delivery attempt took, by endpoint kind.',
    labelNames: ['kind'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly messagesDeadLetteredTotal = new Counter({
    name: 'hookbase_messages_dead_lettered_total',
    help: 'Messages sent to the DLQ, by reason.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly rateLimitedWaitsTotal = new Counter({
    name: 'hookbase_rate_limited_waits_total',
    help: "Attempts an endpoint's rate limit made wait: in line (short waits), or held for later.",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly dispatchShareHoldsTotal = new Counter({
    name: 'hookbase_dispatch_share_holds_total',
    help: "Messages held on the retry schedule (no attempt used) because their organization held its share of the dispatch pool and no slot came within a second: the pool is saturated, and the organization's backlog goes to PostgreSQL so that others' messages are read.",
    registers: [this.registry],
  });
  readonly dispatchBacklogHoldsTotal = new Counter({
    name: 'hookbase_dispatch_backlog_holds_total',
    help: "Messages held on the retry schedule (no attempt used) after waiting HOOKBASE_ENDPOINT_QUEUE_WAIT_MS behind their endpoint's own attempts in flight: a slow endpoint's backlog, moved to PostgreSQL until the endpoint can take it so that it does not hold up the other endpoints of its partition.",
    registers: [this.registry],
  });
  readonly dispatchPoolSlots = new Gauge({
    name: 'hookbase_dispatch_pool_slots',
    help: "This dispatcher's slots for attempts in flight (HOOKBASE_DISPATCH_CONCURRENCY), by state (in_use, free).",
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly dispatchPoolWaiting = new Gauge({
    name: 'hookbase_dispatch_pool_waiting',
    help: 'Messages (and FIFO lanes) of this dispatcher waiting for a slot of its dispatch pool.',
    registers: [this.registry],
  });
  readonly dispatchReadAheadPayloadBytes = new Gauge({
    name: 'hookbase_dispatch_read_ahead_payload_bytes',
    help: "Bytes of payloads (as JSON) this dispatcher holds for messages read from the deliveries topic and not yet sent, each event's once; at most HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES. Messages whose payloads did not fit read them when their attempts are about to start.",
    registers: [this.registry],
  });
  readonly deliveryTransitionsSkippedTotal = new Counter({
    name: 'hookbase_delivery_transitions_skipped_total',
    help: "Messages a delivery state write left alone, by transition (the event) and reason (state_not_allowed: its state had moved on to one the event does not leave; not_found; condition_unmet: the write's own condition did not hold).",
    labelNames: ['transition', 'reason'] as const,
    registers: [this.registry],
  });
  readonly circuits = new Gauge({
    name: 'hookbase_circuits',
    help: 'Endpoints whose circuit breaker this dispatcher holds open or half-open, by state.',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly consumerLag = new Gauge({
    name: 'hookbase_consumer_lag',
    help: "Records not yet committed by a consumer group: a partition's log-end offset minus the group's committed offset.",
    labelNames: ['group', 'topic', 'partition'] as const,
    registers: [this.registry],
  });
  readonly consumerAssignedPartitions = new Gauge({
    name: 'hookbase_consumer_assigned_partitions',
    help: "Partitions of a topic this process's consumer holds in its group (0 while rebalancing or out of it); summed over processes, it equals the topic's partition count when every partition has a consumer.",
    labelNames: ['group', 'topic'] as const,
    registers: [this.registry],
  });
  readonly topicPartitions = new Gauge({
    name: 'hookbase_topic_partitions',
    help: 'Partitions of each topic a Hookbase consumer group reads (every process reports them all).',
    labelNames: ['topic'] as const,
    registers: [this.registry],
  });
  readonly retriesScheduled = new Gauge({
    name: 'hookbase_retries_scheduled',
    help: 'Messages in the retry schedule (installation-wide, the same from every process): due (their time has come) and overdue (due for over a minute, not yet picked up).',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly fifoLanes = new Gauge({
    name: 'hookbase_fifo_lanes',
    help: 'FIFO lanes holding messages (installation-wide), by state (running, retrying, queued, blocked) and, when blocked, the reason.',
    labelNames: ['state', 'reason'] as const,
    registers: [this.registry],
  });
  readonly fifoOldestQueuedAgeSeconds = new Gauge({
    name: 'hookbase_fifo_oldest_queued_age_seconds',
    help: 'Age of the oldest message queued in any FIFO lane (0 when none is).',
    registers: [this.registry],
  });
  readonly dbPoolConnections = new Gauge({
    name: 'hookbase_db_pool_connections',
    help: "This process's PostgreSQL connections, by state (in_use, idle).",
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly dbPoolWaiting = new Gauge({
    name: 'hookbase_db_pool_waiting',
    help: 'Queries of this process waiting for a PostgreSQL connection.',
    registers: [this.registry],
  });

  constructor(
    private readonly options: { endpointLabels: boolean; processMetrics: boolean } = {
      endpointLabels: false,
      processMetrics: true,
    },
  ) {
    this.attemptsTotal = new Counter({
      name: 'hookbase_attempts_total',
      help: 'Delivery attempts, by endpoint kind, outcome (succeeded, retry, failed) and response status class.',
      labelNames: options.endpointLabels
        ? ['kind', 'outcome', 'status_class', 'endpoint_id']
        : ['kind', 'outcome', 'status_class'],
      registers: [this.registry],
    });
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Adds a source of gauges measured at each scrape. */
  addScrapeSource(source: ScrapeSource): void {
    // A provider reached through an alias may be initialised twice: it still counts once.
    if (!this.sources.includes(source)) this.sources.push(source);
  }

  /** The Prometheus text exposition, with the scrape-time gauges measured now. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    this.consumerLag.reset();
    this.fifoLanes.reset();
    await Promise.all(this.sources.map((source) => source.collect(this).catch(() => undefined)));
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  publishFinished(outcome: 'acked' | 'timeout' | 'error', seconds: number): void {
    this.publishDurationSeconds.observe({ outcome }, seconds);
  }

  eventsAccepted(surface: IngestSurface, count: number): void {
    if (count > 0) this.eventsAcceptedTotal.inc({ surface }, count);
  }

  eventsRefused(surface: IngestSurface, reason: string, count: number): void {
    if (count > 0) this.eventsRefusedTotal.inc({ surface, reason }, count);
  }

  eventsFannedOut(events: number, messages: number): void {
    this.fanoutEventsTotal.inc(events);
    this.fanoutMessagesTotal.inc(messages);
  }

  attemptFinished(attempt: {
    kind: string;
    outcome: 'succeeded' | 'retry' | 'failed';
    responseStatus: number | null;
    endpointId: string;
    seconds: number;
  }): void {
    const labels: Record<string, string> = {
      kind: attempt.kind,
      outcome: attempt.outcome,
      status_class: statusClass(attempt.responseStatus),
    };
    if (this.options.endpointLabels) labels.endpoint_id = attempt.endpointId;
    this.attemptsTotal.inc(labels);
    this.attemptDurationSeconds.observe({ kind: attempt.kind }, attempt.seconds);
  }

  rateLimitedWait(outcome: 'in_line' | 'held'): void {
    this.rateLimitedWaitsTotal.inc({ outcome });
  }

  shareHeld(): void {
    this.dispatchShareHoldsTotal.inc();
  }

  backlogHeld(): void {
    this.dispatchBacklogHoldsTotal.inc();
  }

  transitionsSkipped(transition: DeliveryEvent, reason: TransitionSkipReason, count: number): void {
    if (count > 0) this.deliveryTransitionsSkippedTotal.inc({ transition, reason }, count);
  }

  deadLettered(reason: string, count: number): void {
    if (count > 0) this.messagesDeadLetteredTotal.inc({ reason }, count);
  }
}
