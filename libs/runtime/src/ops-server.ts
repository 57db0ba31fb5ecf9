import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
  OnApplicationShutdown,
} from '@nestjs/common';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { notReadyMessage, reportedChecks } from './health-answers';
import { HookbaseMetrics, METRICS_OFF_MESSAGE } from './metrics/hookbase-metrics';
import { ReadinessService } from './readiness.service';

/**
 * A worker's own small HTTP server (HOOKBASE_OPS_PORT) for what an orchestrator and Prometheus
 * ask of it: `/health`, `/health/live`, `/health/ready` and `/metrics`. Plain node:http, so workers still never
 * load the web stack. Answers in the same JSON shapes as the HTTP services.
 */
@Injectable()
export class OpsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OpsServer');
  private server: Server | undefined;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly readiness: ReadinessService,
    // Null when HOOKBASE_METRICS=false.
    @Optional() @Inject(HookbaseMetrics) private readonly metrics: HookbaseMetrics | null,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.ops.port;
    if (port === undefined) return;
    const server = createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.config.http.host, () => resolve());
    });
    this.server = server;
    const address = server.address() as AddressInfo;
    this.logger.log(`health and metrics on http://${this.config.http.host}:${address.port}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') {
      return send(response, 405, { error: { code: 'ROUTE_NOT_FOUND', message: 'Only GET' } });
    }
    switch (path) {
      case '/health':
        return send(response, 200, { data: { status: 'ok' } });
      case '/health/live':
        return send(response, 200, { data: { status: 'live' } });
      case '/health/ready': {
        const readiness = await this.readiness.evaluate();
        const checks = reportedChecks(readiness);
        if (readiness.ready) return send(response, 200, { data: { status: 'ready', checks } });
        response.setHeader('retry-after', '1');
        return send(response, 503, {
          error: {
            code: 'SERVICE_UNAVAILABLE',
            message: notReadyMessage(readiness.reasons),
            details: { checks },
          },
        });
      }
      case '/metrics': {
        if (!this.metrics) {
          return send(response, 404, {
            error: { code: 'ROUTE_NOT_FOUND', message: METRICS_OFF_MESSAGE },
          });
        }
        const { contentType, text } = await this.metrics.scrape();
        response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        response.end(text);
        return;
      }
      default:
        return send(response, 404, {
          error: { code: 'ROUTE_NOT_FOUND', message: 'No such route' },
        });
    }
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(text);
}
