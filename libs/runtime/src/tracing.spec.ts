import { startTracing, tracesExported, tracingEnabled } from './tracing';

const mockSdk = { loads: 0, options: [] as unknown[], started: 0, shutdowns: 0 };

jest.mock('@opentelemetry/sdk-node', () => {
  mockSdk.loads++;
  return {
    NodeSDK: class {
      constructor(options: unknown) {
        mockSdk.options.push(options);
      }
      start() {
        mockSdk.started++;
      }
      async shutdown() {
        mockSdk.shutdowns++;
      }
    },
  };
});

describe('tracing', () => {
  beforeEach(() => Object.assign(mockSdk, { loads: 0, options: [], started: 0, shutdowns: 0 }));

  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '   ' }, false],
    [{ OTEL_SERVICE_NAME: 'x' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
  ])('is on for %j: %s', (env, on) => {
    expect(tracingEnabled(env)).toBe(on);
  });

  it('never loads the SDK when off', async () => {
    const tracing = startTracing('hookbase-test', { OTEL_SERVICE_NAME: 'other' });
    expect(tracesExported()).toBe(false);
    await tracing.shutdown();
    expect(mockSdk).toEqual({ loads: 0, options: [], started: 0, shutdowns: 0 });
  });

  it('starts the SDK for traces only when on, named after the service unless OTEL_SERVICE_NAME says', async () => {
    expect(tracesExported()).toBe(false);
    const tracing = startTracing('hookbase-test', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    });
    startTracing('hookbase-test', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'edge-ingest',
    });
    expect(mockSdk.started).toBe(2);
    expect(mockSdk.options).toEqual([
      {
        serviceName: 'hookbase-test',
        instrumentations: [],
        metricReaders: [],
        logRecordProcessors: [],
      },
      {
        serviceName: 'edge-ingest',
        instrumentations: [],
        metricReaders: [],
        logRecordProcessors: [],
      },
    ]);
    expect(tracesExported()).toBe(true);
    await tracing.shutdown();
    expect(mockSdk.shutdowns).toBe(1);
    expect(tracesExported()).toBe(false);
  });
});
