import {
  createServer,
  IncomingHttpHeaders,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export type ScriptedResponse =
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | { drop: true };

export type ResponseScript = (request: ReceivedRequest, index: number) => ScriptedResponse;

/**
 * A real HTTP receiver on 127.0.0.1, port 0, that records every request and answers as its
 * script says: chosen statuses, headers (Retry-After), latency, or a dropped connection.
 */
export class TestReceiver {
  readonly requests: ReceivedRequest[] = [];
  private server: Server | undefined;
  private script: ResponseScript = () => ({ status: 200, body: 'ok' });

  private readonly delayed = new Set<NodeJS.Timeout>();

  respondWith(script: ResponseScript): void {
    this.script = script;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  private handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      const index = this.requests.push(request) - 1;
      const response = this.script(request, index);
      if ('drop' in response) {
        req.socket.destroy();
        return;
      }
      const send = () => {
        res.writeHead(response.status, response.headers);
        res.end(response.body ?? '');
      };
      if (response.delayMs) {
        const timer = setTimeout(() => {
          this.delayed.delete(timer);
          if (!res.destroyed) send();
        }, response.delayMs);
        this.delayed.add(timer);
      } else send();
    });
  }

  async stop(): Promise<void> {
    // Answers still being held back (slow receivers) are dropped with the connections.
    this.delayed.forEach((timer) => clearTimeout(timer));
    this.delayed.clear();
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
