import { spawn } from 'node:child_process';
import { distribution } from '../../core/stats';
import { now } from '../../core/util';
import { EventPublisher } from '../../drivers/ingest-clients';
import { benchPayload, EVENT_TYPE, runClosedLoop } from '../../drivers/publisher';

/**
 * The bare HTTP bound: what a `node:http` server on this machine answers when it only reads each
 * body, parses it and answers with an id per event (202, or 207 for a batch, in the shapes the
 * bench's clients read). It runs in a process of its own, as Hookbase does, so client and server
 * share the cores as in a step, and is driven by the step's own kind of client while Hookbase is
 * idle. A ceiling, like the raw Kafka produce bound: Hookbase also authenticates, validates,
 * produces to Kafka (acks=all) and fans out. It stops when its stdin closes.
 */
const SERVER = `
const http = require('node:http');
let next = 0;
const one = () => ({ id: 'evt_bare_' + next++ });
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let status = 400;
    let body = { error: { code: 'VALIDATION_FAILED' } };
    try {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (req.url === '/v1/events') [status, body] = [202, { data: one() }];
      else if (req.url === '/v1/events/batch' && Array.isArray(parsed.events))
        [status, body] = [207, { data: parsed.events.map(() => ({ status: 202, data: one() })) }];
    } catch {}
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.stdin.on('end', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
process.stdin.resume();
`;

export interface BareServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts the bare server in a child process on a free loopback port; resolves once it listens. */
export function startBareServer(timeoutMs = 10_000): Promise<BareServer> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.stdin.end();
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(kill);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the bare HTTP server did not listen within ${timeoutMs} ms`));
    }, timeoutMs);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      resolve({ url: `http://127.0.0.1:${Number(out.split('\n')[0])}`, stop });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the bare HTTP server exited (${code}) before it listened`));
    });
  });
}

export interface BoundRun {
  /** Events answered as accepted (alone or inside a 207) per second. */
  perSecond: number;
  requests: number;
  p99Ms: number | null;
  /** Events not answered as accepted: the figure stands only when this is 0. */
  unanswered: number;
}

/** Drives `publisher` in a closed loop, as a step does, for `seconds`; counts accepted events. */
export async function measureBound(options: {
  publisher: EventPublisher;
  concurrency: number;
  eventsPerRequest: number;
  payloadBytes: number;
  seconds: number;
}): Promise<BoundRun> {
  let accepted = 0;
  let unanswered = 0;
  let seq = 0;
  const latencies: number[] = [];
  const startMs = now();
  await runClosedLoop({
    workers: options.concurrency,
    untilMs: startMs + options.seconds * 1000,
    send: async () => {
      const events = Array.from({ length: options.eventsPerRequest }, () => ({
        eventType: EVENT_TYPE,
        payload: benchPayload(seq++, options.payloadBytes),
      }));
      const sentAt = now();
      const outcomes = await options.publisher.publish(events);
      latencies.push(now() - sentAt);
      for (const outcome of outcomes)
        if (outcome.kind === 'accepted') accepted++;
        else unanswered++;
    },
  });
  const seconds = (now() - startMs) / 1000;
  return {
    perSecond: seconds > 0 ? accepted / seconds : 0,
    requests: latencies.length,
    p99Ms: distribution(latencies)?.p99 ?? null,
    unanswered,
  };
}
