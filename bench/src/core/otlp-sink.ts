import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * A trace collector that keeps nothing: an OTLP/HTTP endpoint on 127.0.0.1 that reads each export
 * and answers success, so a bench run with tracing on pays for making and sending spans (what an
 * installation pays) and not for a collector's work. It counts what it was sent, to show the
 * services really exported.
 */
export class OtlpSink {
  private server: Server | undefined;
  readonly stats = { requests: 0, bytes: 0 };

  /** Starts the sink; its URL is what OTEL_EXPORTER_OTLP_ENDPOINT takes (the SDK adds /v1/traces). */
  async start(): Promise<string> {
    const server = createServer({ keepAlive: true }, (request, response) => {
      request.on('data', (chunk: Buffer) => {
        this.stats.bytes += chunk.length;
      });
      request.on('end', () => {
        this.stats.requests++;
        // An empty ExportTraceServiceResponse, in the encoding the exporter used.
        const json = (request.headers['content-type'] ?? '').includes('json');
        response.writeHead(200, {
          'content-type': json ? 'application/json' : 'application/x-protobuf',
        });
        response.end(json ? '{}' : undefined);
      });
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
