import { HookbaseMetrics } from './hookbase-metrics';

const quiet = { endpointLabels: false, processMetrics: false };

describe('HookbaseMetrics', () => {
  it('names every metric with the hookbase_ prefix and Prometheus suffixes', async () => {
    const metrics = new HookbaseMetrics(quiet);
    const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    for (const name of names) expect(name).toMatch(/^hookbase_[a-z_]+[a-z]$/);
    const counters = (await metrics.registry.getMetricsAsJSON()).filter(
      (m) => (m.type as unknown as string) === 'counter',
    );
    for (const counter of counters) expect(counter.name).toMatch(/_total$/);
    expect(names.filter((n) => n.includes('duration')).every((n) => n.endsWith('_seconds'))).toBe(
      true,
    );
  });

  it('counts attempts by kind, outcome and status class, timing them by kind', async () => {
    const metrics = new HookbaseMetrics(quiet);
    metrics.attemptFinished({
      kind: 'http',
      outcome: 'retry',
      responseStatus: 503,
      endpointId: 'ep_1',
      seconds: 0.2,
    });
    metrics.attemptFinished({
      kind: 'sqs',
      outcome: 'succeeded',
      responseStatus: null,
      endpointId: 'ep_2',
      seconds: 0.01,
    });
    const { text } = await metrics.scrape();
    expect(text).toContain(
      'hookbase_attempts_total{kind="http",outcome="retry",status_class="5xx"} 1',
    );
    expect(text).toContain(
      'hookbase_attempts_total{kind="sqs",outcome="succeeded",status_class="none"} 1',
    );
    expect(text).toContain('hookbase_attempt_duration_seconds_count{kind="http"} 1');
    expect(text).not.toContain('ep_1');
  });

  it('labels attempts with the endpoint id only when turned on', async () => {
    const metrics = new HookbaseMetrics({ endpointLabels: true, processMetrics: false });
    metrics.attemptFinished({
      kind: 'http',
      outcome: 'succeeded',
      responseStatus: 200,
      endpointId: 'ep_1',
      seconds: 0.1,
    });
    expect((await metrics.scrape()).text).toContain(
      'hookbase_attempts_total{kind="http",outcome="succeeded",status_class="2xx",endpoint_id="ep_1"} 1',
    );
  });

  it('counts events, fan-out, publishes and dead letters; zero counts add no series', async () => {
    const metrics = new HookbaseMetrics(quiet);
    metrics.eventsAccepted('batch', 3);
    metrics.eventsRefused('rest', 'VALIDATION_FAILED', 1);
    metrics.eventsRefused('rest', 'RATE_LIMITED', 0);
    metrics.eventsFannedOut(2, 5);
    metrics.publishFinished('acked', 0.004);
    metrics.deadLettered('max_attempts', 2);
    metrics.deadLettered('circuit_open', 0);
    const { text } = await metrics.scrape();
    expect(text).toContain('hookbase_events_accepted_total{surface="batch"} 3');
    expect(text).toContain(
      'hookbase_events_refused_total{surface="rest",reason="VALIDATION_FAILED"} 1',
    );
    expect(text).not.toContain('RATE_LIMITED');
    expect(text).toContain('hookbase_fanout_events_total 2');
    expect(text).toContain('hookbase_fanout_messages_total 5');
    expect(text).toContain('hookbase_publish_duration_seconds_count{outcome="acked"} 1');
    expect(text).toContain('hookbase_messages_dead_lettered_total{reason="max_attempts"} 2');
    expect(text).not.toContain('circuit_open');
  });

  it('measures scrape sources at each scrape; a failing one leaves out only its gauges', async () => {
    const metrics = new HookbaseMetrics(quiet);
    let lag = 7;
    metrics.addScrapeSource({
      collect: async (m) => {
        m.consumerLag.set({ group: 'g', topic: 't', partition: '0' }, lag);
      },
    });
    metrics.addScrapeSource({
      collect: async () => {
        throw new Error('broker unreachable');
      },
    });
    expect((await metrics.scrape()).text).toContain(
      'hookbase_consumer_lag{group="g",topic="t",partition="0"} 7',
    );
    lag = 0;
    expect((await metrics.scrape()).text).toContain(
      'hookbase_consumer_lag{group="g",topic="t",partition="0"} 0',
    );
  });

  it("adds Node's process metrics under their standard names when asked", async () => {
    const metrics = new HookbaseMetrics({ endpointLabels: false, processMetrics: true });
    const { contentType, text } = await metrics.scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);
  });

  it('counts skipped delivery state transitions by transition and reason', async () => {
    const metrics = new HookbaseMetrics(quiet);
    metrics.transitionsSkipped('held', 'state_not_allowed', 2);
    metrics.transitionsSkipped('attempt_started', 'condition_unmet', 1);
    metrics.transitionsSkipped('expired', 'not_found', 0);
    const { text } = await metrics.scrape();
    expect(text).toContain(
      'hookbase_delivery_transitions_skipped_total{transition="held",reason="state_not_allowed"} 2',
    );
    expect(text).toContain(
      'hookbase_delivery_transitions_skipped_total{transition="attempt_started",reason="condition_unmet"} 1',
    );
    expect(text).not.toContain('reason="not_found"');
  });
});
