import { ConfigError, loadConfig, pollCursorKeys, requireAdminToken } from './config';

describe('loadConfig', () => {
  it('has working defaults for local use', () => {
    const config = loadConfig({});
    expect(config.http).toEqual({
      host: '127.0.0.1',
      port: 3000,
      maxPayloadBytes: 262144,
      inFlightBodyBytes: 64 * 1024 * 1024,
      maxBatchEvents: 500,
      ackTimeoutMs: 5000,
    });
    expect(config.kafka.brokers).toEqual(['127.0.0.1:19092']);
    expect(config.kafka.topicPrefix).toBe('hookbase');
    expect(config.delivery.allowPrivateTargets).toBe(false);
  });

  it('reads the bytes of request bodies served at once, at least 1 KiB', () => {
    expect(
      loadConfig({ HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES: '1048576' }).http.inFlightBodyBytes,
    ).toBe(1024 * 1024);
    for (const bad of ['0', '1023', '-5', 'lots']) {
      expect(() => loadConfig({ HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES: bad })).toThrow(
        /HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES/,
      );
    }
  });

  it('reads the auto-disable period: five days by default, a duration, or off', () => {
    expect(loadConfig({}).delivery.autoDisableAfterMs).toBe(432_000_000);
    expect(loadConfig({ HOOKBASE_AUTO_DISABLE_AFTER: '12h' }).delivery.autoDisableAfterMs).toBe(
      43_200_000,
    );
    expect(
      loadConfig({ HOOKBASE_AUTO_DISABLE_AFTER: 'off' }).delivery.autoDisableAfterMs,
    ).toBeNull();
    expect(() => loadConfig({ HOOKBASE_AUTO_DISABLE_AFTER: '5 days' })).toThrow(ConfigError);
  });

  it('reads the egress proxy and its bypass list, and refuses a proxy that is not http://', () => {
    expect(loadConfig({}).delivery.egressProxy).toBeNull();
    expect(
      loadConfig({
        HOOKBASE_EGRESS_PROXY: 'http://proxy.internal:3128',
        HOOKBASE_EGRESS_NO_PROXY: 'internal.example, 10.0.0.1:8080',
      }).delivery.egressProxy,
    ).toEqual({
      url: 'http://proxy.internal:3128',
      noProxy: [
        { host: 'internal.example', port: null },
        { host: '10.0.0.1', port: 8080 },
      ],
    });
    expect(() => loadConfig({ HOOKBASE_EGRESS_PROXY: 'socks5://proxy:1080' })).toThrow(ConfigError);
  });

  it('reads and converts every kind of value', () => {
    const config = loadConfig({
      PORT: '8080',
      KAFKA_BROKERS: 'a:1,b:2',
      HOOKBASE_ALLOW_PRIVATE_TARGETS: 'true',
      HOOKBASE_ADMIN_TOKEN: 'x'.repeat(16),
      HOOKBASE_RUN_MIGRATIONS: '0',
    });
    expect(config.http.port).toBe(8080);
    expect(config.kafka.brokers).toEqual(['a:1', 'b:2']);
    expect(config.delivery.allowPrivateTargets).toBe(true);
    expect(config.database.runMigrations).toBe(false);
    expect(requireAdminToken(config)).toBe('x'.repeat(16));
  });

  it('logs JSON lines at info unless told otherwise, and refuses unknown formats and levels', () => {
    expect(loadConfig({})).toMatchObject({ logFormat: 'json', logLevel: 'info' });
    expect(loadConfig({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'debug' })).toMatchObject({
      logFormat: 'pretty',
      logLevel: 'debug',
    });
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(/LOG_FORMAT/);
    expect(() => loadConfig({ LOG_LEVEL: 'trace' })).toThrow(/LOG_LEVEL/);
  });

  it('serves gRPC ingest on 50051 unless given a port, 0 (any free one) or -1 (off)', () => {
    expect(loadConfig({}).grpc).toEqual({ port: 50051 });
    expect(loadConfig({ HOOKBASE_GRPC_PORT: '0' }).grpc).toEqual({ port: 0 });
    expect(loadConfig({ HOOKBASE_GRPC_PORT: '-1' }).grpc).toEqual({ port: undefined });
    expect(() => loadConfig({ HOOKBASE_GRPC_PORT: '-2' })).toThrow(/HOOKBASE_GRPC_PORT/);
  });

  it("serves a worker's health and metrics only when given a port or 0 (any free one)", () => {
    expect(loadConfig({}).ops).toEqual({ port: undefined });
    expect(loadConfig({ HOOKBASE_OPS_PORT: '9464' }).ops).toEqual({ port: 9464 });
    expect(loadConfig({ HOOKBASE_OPS_PORT: '0' }).ops).toEqual({ port: 0 });
    expect(loadConfig({ HOOKBASE_OPS_PORT: '-1' }).ops).toEqual({ port: undefined });
    expect(() => loadConfig({ HOOKBASE_OPS_PORT: '-2' })).toThrow(/HOOKBASE_OPS_PORT/);
  });

  it('creates topics with the catalog partitions unless told otherwise', () => {
    expect(loadConfig({}).kafka.topics).toEqual({ partitions: {}, replicationFactor: -1 });
    expect(
      loadConfig({
        HOOKBASE_DELIVERIES_PARTITIONS: '24',
        HOOKBASE_EVENTS_PARTITIONS: '8',
        HOOKBASE_DLQ_PARTITIONS: '2',
        HOOKBASE_KAFKA_REPLICATION_FACTOR: '3',
      }).kafka.topics,
    ).toEqual({ partitions: { events: 8, deliveries: 24, dlq: 2 }, replicationFactor: 3 });
    expect(() => loadConfig({ HOOKBASE_DELIVERIES_PARTITIONS: '0' })).toThrow(
      /HOOKBASE_DELIVERIES_PARTITIONS/,
    );
    expect(() => loadConfig({ HOOKBASE_KAFKA_REPLICATION_FACTOR: '0' })).toThrow(
      /HOOKBASE_KAFKA_REPLICATION_FACTOR/,
    );
  });

  it('produces through @platformatic/kafka unless told otherwise, and refuses an unknown client', () => {
    expect(loadConfig({}).kafka.producer).toBe('platformatic');
    expect(loadConfig({ HOOKBASE_KAFKA_PRODUCER: 'kafkajs' }).kafka.producer).toBe('kafkajs');
    expect(() => loadConfig({ HOOKBASE_KAFKA_PRODUCER: 'rdkafka' })).toThrow(
      /HOOKBASE_KAFKA_PRODUCER/,
    );
  });

  it('consumes through @platformatic/kafka unless told otherwise, and refuses an unknown client', () => {
    expect(loadConfig({}).kafka.consumer).toBe('platformatic');
    expect(loadConfig({ HOOKBASE_KAFKA_CONSUMER: 'kafkajs' }).kafka.consumer).toBe('kafkajs');
    expect(() => loadConfig({ HOOKBASE_KAFKA_CONSUMER: 'rdkafka' })).toThrow(
      /HOOKBASE_KAFKA_CONSUMER/,
    );
  });

  it('drains for 25 s on a stop unless told otherwise, within 0 to 10 minutes', () => {
    expect(loadConfig({}).shutdown).toEqual({ drainMs: 25_000 });
    expect(loadConfig({ HOOKBASE_SHUTDOWN_DRAIN_MS: '0' }).shutdown).toEqual({ drainMs: 0 });
    expect(loadConfig({ HOOKBASE_SHUTDOWN_DRAIN_MS: '600000' }).shutdown).toEqual({
      drainMs: 600_000,
    });
    expect(() => loadConfig({ HOOKBASE_SHUTDOWN_DRAIN_MS: '600001' })).toThrow(
      /HOOKBASE_SHUTDOWN_DRAIN_MS/,
    );
    expect(() => loadConfig({ HOOKBASE_SHUTDOWN_DRAIN_MS: '-1' })).toThrow(
      /HOOKBASE_SHUTDOWN_DRAIN_MS/,
    );
    expect(() => loadConfig({ HOOKBASE_SHUTDOWN_DRAIN_MS: '2.5' })).toThrow(
      /HOOKBASE_SHUTDOWN_DRAIN_MS/,
    );
  });

  it('labels metrics by endpoint only when asked to', () => {
    expect(loadConfig({}).metrics).toEqual({ enabled: true, endpointLabels: false });
    expect(loadConfig({ HOOKBASE_METRICS_ENDPOINT_LABELS: 'true' }).metrics).toEqual({
      enabled: true,
      endpointLabels: true,
    });
  });

  it('collects metrics unless HOOKBASE_METRICS turns them off, refusing other values', () => {
    expect(loadConfig({ HOOKBASE_METRICS: 'false' }).metrics.enabled).toBe(false);
    expect(loadConfig({ HOOKBASE_METRICS: '0' }).metrics.enabled).toBe(false);
    expect(loadConfig({ HOOKBASE_METRICS: 'true' }).metrics.enabled).toBe(true);
    expect(() => loadConfig({ HOOKBASE_METRICS: 'off' })).toThrow(/HOOKBASE_METRICS/);
  });

  it('gives each organization a share of the dispatch pool, in percent, refusing nonsense', () => {
    expect(loadConfig({}).delivery.organizationShare).toBe(64); // 25 % of 256
    expect(
      loadConfig({
        HOOKBASE_DISPATCH_CONCURRENCY: '10',
        HOOKBASE_DISPATCH_ORGANIZATION_SHARE: '50',
      }).delivery.organizationShare,
    ).toBe(5);
    expect(
      loadConfig({ HOOKBASE_DISPATCH_CONCURRENCY: '2', HOOKBASE_DISPATCH_ORGANIZATION_SHARE: '1' })
        .delivery.organizationShare,
    ).toBe(1);
    for (const bad of ['0', '101', '12.5', 'half'])
      expect(() => loadConfig({ HOOKBASE_DISPATCH_ORGANIZATION_SHARE: bad })).toThrow(
        /HOOKBASE_DISPATCH_ORGANIZATION_SHARE/,
      );
  });

  it('reads 1,000 unfinished messages ahead per partition unless told otherwise, within bounds', () => {
    expect(loadConfig({}).delivery.readAheadPerPartition).toBe(1000);
    expect(loadConfig({ HOOKBASE_DISPATCH_READ_AHEAD: '250' }).delivery.readAheadPerPartition).toBe(
      250,
    );
    for (const bad of ['0', '9', '100001', '1.5', 'many'])
      expect(() => loadConfig({ HOOKBASE_DISPATCH_READ_AHEAD: bad })).toThrow(
        /HOOKBASE_DISPATCH_READ_AHEAD/,
      );
  });

  it('sends every payload by reference unless told otherwise, within bounds', () => {
    expect(loadConfig({}).delivery.inlinePayloadBytes).toBe(0);
    const inline = loadConfig({ HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES: '4194304' });
    expect(inline.delivery.inlinePayloadBytes).toBe(4 * 1024 * 1024);
    for (const bad of ['-1', '4194305', '1.5', 'all'])
      expect(() => loadConfig({ HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES: bad })).toThrow(
        /HOOKBASE_DELIVERY_INLINE_PAYLOAD_BYTES/,
      );
  });

  it('holds up to 32 MiB of read-ahead payloads unless told otherwise, within bounds', () => {
    expect(loadConfig({}).delivery.readAheadPayloadBytes).toBe(32 * 1024 * 1024);
    expect(
      loadConfig({ HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES: '0' }).delivery
        .readAheadPayloadBytes,
    ).toBe(0);
    for (const bad of ['-1', '1073741825', '1.5', 'lots'])
      expect(() => loadConfig({ HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES: bad })).toThrow(
        /HOOKBASE_DISPATCH_READ_AHEAD_PAYLOAD_BYTES/,
      );
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '' }).http.port).toBe(3000);
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        KAFKA_BROKERS: 'nohost',
        HOOKBASE_ALLOW_PRIVATE_TARGETS: 'maybe',
      });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toContain('PORT');
      expect(problems).toContain('KAFKA_BROKERS');
      expect(problems).toContain('HOOKBASE_ALLOW_PRIVATE_TARGETS');
    }
  });

  it('refuses a short admin token and requires one for management', () => {
    expect(() => loadConfig({ HOOKBASE_ADMIN_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => requireAdminToken(loadConfig({}))).toThrow(/HOOKBASE_ADMIN_TOKEN/);
  });

  it('refuses an admin token longer than any bearer string is read, or with whitespace', () => {
    expect(() => loadConfig({ HOOKBASE_ADMIN_TOKEN: 'x'.repeat(257) })).toThrow(/at most 256/);
    expect(() => loadConfig({ HOOKBASE_ADMIN_TOKEN: 'x'.repeat(8) + ' ' + 'y'.repeat(8) })).toThrow(
      /whitespace/,
    );
    expect(loadConfig({ HOOKBASE_ADMIN_TOKEN: 'x'.repeat(256) }).auth.adminToken).toHaveLength(256);
  });

  it('has abuse limits by plan with defaults, and reads each one', () => {
    const defaults = loadConfig({});
    expect(defaults.auth).toMatchObject({
      apiKeyCacheMs: 10_000,
      apiKeyCacheSize: 10_000,
      failuresPerMinute: 30,
    });
    expect(defaults.limits).toEqual({
      ingestEventsPerSecond: { free: 1_000, pro: 5_000, business: 20_000 },
      apiRequestsPerSecond: { free: 100, pro: 500, business: 2_000 },
      maxEndpoints: { free: 100, pro: 1_000, business: 10_000 },
      replayFailed: { maxPerCall: 1_000, perMinute: 10_000 },
    });
    const set = loadConfig({
      HOOKBASE_API_KEY_CACHE_SIZE: '5',
      HOOKBASE_AUTH_FAILURES_PER_MINUTE: '3',
      HOOKBASE_INGEST_EVENTS_PER_SECOND_FREE: '600',
      HOOKBASE_INGEST_EVENTS_PER_SECOND_PRO: '700',
      HOOKBASE_INGEST_EVENTS_PER_SECOND_BUSINESS: '800',
      HOOKBASE_API_REQUESTS_PER_SECOND_FREE: '1',
      HOOKBASE_API_REQUESTS_PER_SECOND_PRO: '2',
      HOOKBASE_API_REQUESTS_PER_SECOND_BUSINESS: '3',
      HOOKBASE_MAX_ENDPOINTS_FREE: '4',
      HOOKBASE_MAX_ENDPOINTS_PRO: '5',
      HOOKBASE_MAX_ENDPOINTS_BUSINESS: '6',
      HOOKBASE_REPLAY_FAILED_MAX_PER_CALL: '7',
      HOOKBASE_REPLAY_FAILED_PER_MINUTE: '8',
    });
    expect(set.auth).toMatchObject({ apiKeyCacheSize: 5, failuresPerMinute: 3 });
    expect(set.limits).toEqual({
      ingestEventsPerSecond: { free: 600, pro: 700, business: 800 },
      apiRequestsPerSecond: { free: 1, pro: 2, business: 3 },
      maxEndpoints: { free: 4, pro: 5, business: 6 },
      replayFailed: { maxPerCall: 7, perMinute: 8 },
    });
  });

  it('refuses limits that are not positive integers', () => {
    for (const name of [
      'HOOKBASE_AUTH_FAILURES_PER_MINUTE',
      'HOOKBASE_API_REQUESTS_PER_SECOND_FREE',
      'HOOKBASE_MAX_ENDPOINTS_PRO',
      'HOOKBASE_REPLAY_FAILED_MAX_PER_CALL',
    ]) {
      expect(() => loadConfig({ [name]: '0' })).toThrow(name);
      expect(() => loadConfig({ [name]: '1.5' })).toThrow(name);
    }
  });

  it('refuses an ingest limit below the largest batch, which could never pass', () => {
    expect(() => loadConfig({ HOOKBASE_INGEST_EVENTS_PER_SECOND_FREE: '499' })).toThrow(
      /HOOKBASE_INGEST_EVENTS_PER_SECOND_FREE: must be at least HOOKBASE_MAX_BATCH_EVENTS \(500\)/,
    );
    expect(
      loadConfig({
        HOOKBASE_INGEST_EVENTS_PER_SECOND_FREE: '100',
        HOOKBASE_MAX_BATCH_EVENTS: '100',
      }).limits.ingestEventsPerSecond.free,
    ).toBe(100);
  });

  it('reads the credentials key (32 bytes in base64) and refuses anything else', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const old = Buffer.alloc(32, 9).toString('base64');
    expect(loadConfig({}).credentials).toEqual({ key: undefined, previousKeys: [] });
    expect(
      loadConfig({
        HOOKBASE_CREDENTIALS_KEY: key,
        HOOKBASE_CREDENTIALS_PREVIOUS_KEYS: ` ${old} `,
      }).credentials,
    ).toEqual({ key, previousKeys: [old] });
    const short = Buffer.alloc(16).toString('base64');
    expect(() => loadConfig({ HOOKBASE_CREDENTIALS_KEY: short })).toThrow(
      /HOOKBASE_CREDENTIALS_KEY: must be 32 bytes/,
    );
    expect(() => loadConfig({ HOOKBASE_CREDENTIALS_KEY: 'not base64!' })).toThrow(ConfigError);
    expect(() =>
      loadConfig({ HOOKBASE_CREDENTIALS_KEY: key, HOOKBASE_CREDENTIALS_PREVIOUS_KEYS: `${old},x` }),
    ).toThrow(/HOOKBASE_CREDENTIALS_PREVIOUS_KEYS/);
    expect(() => loadConfig({ HOOKBASE_CREDENTIALS_PREVIOUS_KEYS: old })).toThrow(
      /needs HOOKBASE_CREDENTIALS_KEY/,
    );
  });

  it('refuses to start in production (NODE_ENV=production) without a credentials key', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /HOOKBASE_CREDENTIALS_KEY: required in production \(NODE_ENV=production\)/,
    );
    expect(loadConfig({ NODE_ENV: 'production', HOOKBASE_CREDENTIALS_KEY: key }).production).toBe(
      true,
    );
    expect(loadConfig({ NODE_ENV: 'development' }).production).toBe(false);
    expect(loadConfig({}).production).toBe(false);
  });
});

describe('pollCursorKeys', () => {
  const key = Buffer.alloc(32, 7).toString('base64');
  const old = Buffer.alloc(32, 9).toString('base64');
  const token = 'an-admin-token-of-some-length';

  it('derives one key per credentials key, current first, none of them the key itself', () => {
    const keys = pollCursorKeys(
      loadConfig({ HOOKBASE_CREDENTIALS_KEY: key, HOOKBASE_CREDENTIALS_PREVIOUS_KEYS: old }),
    )!;
    expect(keys).toHaveLength(2);
    expect(keys[0]).toHaveLength(32);
    expect(keys[0].equals(Buffer.from(key, 'base64'))).toBe(false);
    expect(keys[1].equals(keys[0])).toBe(false);
    // Derived, so the same configuration always gives the same keys (cursors survive restarts).
    expect(pollCursorKeys(loadConfig({ HOOKBASE_CREDENTIALS_KEY: key }))![0]).toEqual(keys[0]);
  });

  it('falls back to the admin token, and has none without either', () => {
    const fromToken = pollCursorKeys(loadConfig({ HOOKBASE_ADMIN_TOKEN: token }))!;
    expect(fromToken).toHaveLength(1);
    expect(
      pollCursorKeys(
        loadConfig({ HOOKBASE_ADMIN_TOKEN: token, HOOKBASE_CREDENTIALS_KEY: key }),
      )![0],
    ).not.toEqual(fromToken[0]);
    expect(pollCursorKeys(loadConfig({}))).toBeUndefined();
  });
});
