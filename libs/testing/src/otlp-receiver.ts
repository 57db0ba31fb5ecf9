import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carries it, with its attributes flattened. */
export interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  startNanos: bigint;
  endNanos: bigint;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  attributes: Record<string, string | number | boolean>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: {
        name: string;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        startTimeUnixNano: string | number;
        endTimeUnixNano: string | number;
        status?: { code?: number };
        attributes?: OtlpKeyValue[];
      }[];
    }[];
  }[];
}

function valueOf(value: OtlpValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return '';
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/**
 * An OTLP/HTTP trace collector on 127.0.0.1, port 0, for tests: takes the JSON encoding
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) at `POST /v1/traces` and keeps every span. A request
 * it cannot read is kept in `refused`, answered 415 or 400, so a test can fail on it.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly refused: string[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !type.includes('json')) {
        this.refused.push(`${req.method} ${req.url} ${type}`);
        res.writeHead(415).end();
        return;
      }
      try {
        this.take(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
      } catch (error) {
        this.refused.push(`unreadable export: ${(error as Error).message}`);
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }

  private take(body: OtlpExport): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = String(
        attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '',
      );
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            service,
            name: span.name,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            startNanos: BigInt(span.startTimeUnixNano),
            endNanos: BigInt(span.endTimeUnixNano),
            statusCode: span.status?.code ?? 0,
            attributes: attributesOf(span.attributes),
          });
        }
      }
    }
  }
}
