import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { answerFor, EndpointBehaviour, HEALTHY } from './behaviour';
import { now } from './util';
import { LedgerSink } from './ledger';

/** Where one endpoint's requests are accounted for, and how they are answered. */
export interface ReceiverRoute {
  behaviour: EndpointBehaviour;
  ledger: LedgerSink;
}

/**
 * The webhook receiver the bench delivers to: a plain node:http server on 127.0.0.1 (keep-alive,
 * no framework, so it stays cheap beside the load it measures). Endpoint i is the path `/e/i`;
 * the event's sequence number is in its payload (`s`). Each request is written to the endpoint's
 * ledger when it arrives, so "received" does not include the receiver's own latency.
 */
export class BenchReceiver {
  private readonly servers: Server[] = [];
  private readonly routes = new Map<number, ReceiverRoute>();
  /** Answers being held back (a latency), dropped when their request goes away or at stop. */
  private readonly delayed = new Set<NodeJS.Timeout>();
  readonly stats = { requests: 0, unrouted: 0, malformed: 0, failedOnPurpose: 0, dropped: 0 };

  route(endpoint: number, route: ReceiverRoute): void {
    this.routes.set(endpoint, route);
  }

  /**
   * Starts a server; called again, the same endpoints at another origin (a port of its own):
   * Hookbase keeps its connections per origin, and receivers of different tenants are different
   * hosts, so a scenario gives a neighbour's endpoints their own.
   */
  async start(): Promise<string> {
    const server = createServer({ keepAlive: true }, (req, res) => this.handle(req, res));
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = 0;
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = now();
      this.stats.requests++;
      const path = req.url ?? '';
      if (path === '/rtt') {
        // The bench's own round-trip probe (fifo-rtt's bound): the same latency, no ledger.
        const delay = Number(req.headers['x-bench-delay-ms'] ?? 0);
        setTimeout(() => res.writeHead(200).end('ok'), delay);
        return;
      }
      const match = /^\/e\/(\d+)$/.exec(path);
      const route = match ? this.routes.get(Number(match[1])) : undefined;
      if (!match || !route) {
        this.stats.unrouted++;
        res.writeHead(404).end('no such bench endpoint');
        return;
      }
      let seq: number;
      try {
        seq = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { s: number }).s;
        if (!Number.isInteger(seq)) throw new Error('no sequence number');
      } catch {
        this.stats.malformed++;
        res.writeHead(400).end('not a bench event');
        return;
      }
      const endpoint = Number(match[1]);
      const attempt = Number(req.headers['hookbase-attempt'] ?? 1);
      const messageId = String(req.headers['webhook-id'] ?? `${seq}/${endpoint}`);
      const answer = answerFor(route.behaviour ?? HEALTHY, { messageId, attempt });
      const ok = answer.kind === 'respond' && answer.status >= 200 && answer.status < 300;
      route.ledger.attempt(seq, endpoint, at, ok);
      if (!ok) this.stats.failedOnPurpose++;
      const reply = () => {
        if (answer.kind === 'drop') {
          this.stats.dropped++;
          req.socket.destroy();
        } else
          res
            .writeHead(answer.status, { 'content-type': 'text/plain' })
            .end(ok ? 'ok' : 'bench failure');
      };
      if (answer.delayMs > 0) {
        // A latency longer than Hookbase waits (a receiver that never answers) ends with the
        // request: Hookbase gives up and closes it, and nothing is left to answer.
        const timer = setTimeout(() => {
          this.delayed.delete(timer);
          reply();
        }, answer.delayMs);
        this.delayed.add(timer);
        res.once('close', () => {
          clearTimeout(timer);
          this.delayed.delete(timer);
        });
      } else reply();
    });
  }

  async stop(): Promise<void> {
    const servers = this.servers.splice(0);
    this.delayed.forEach((timer) => clearTimeout(timer));
    this.delayed.clear();
    await Promise.all(
      servers.map((server) => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      }),
    );
  }
}
