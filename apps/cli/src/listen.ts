import { Hookbase, HookbaseApiError } from '@hookbase/sdk';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { CliConfig, ListenState, readConfig, writeConfig } from './config';
import { EXIT } from './errors';
import { Output } from './output';

export interface ListenOptions {
  forwardTo: string;
  eventTypes: string[];
  intervalMs: number;
  timeoutMs: number;
  configPath: string;
  apiUrl: string;
  organizationId: string;
}

interface PolledMessage {
  messageId: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  payload: unknown;
  cursor: string;
}

const stateKey = (options: ListenOptions) => `${options.apiUrl} ${options.organizationId}`;

function saveState(options: ListenOptions, state: ListenState): void {
  const config: CliConfig = readConfig(options.configPath);
  config.listen = { ...config.listen, [stateKey(options)]: state };
  writeConfig(config, options.configPath);
}

/** The polling endpoint of an earlier run when it still exists, else a new one. */
async function endpointFor(client: Hookbase, options: ListenOptions, output: Output) {
  const known = readConfig(options.configPath).listen?.[stateKey(options)];
  if (known) {
    try {
      await client.getEndpoint(known.endpointId);
      output.err(`Reusing polling endpoint ${known.endpointId}`);
      return known;
    } catch (error) {
      if (!(error instanceof HookbaseApiError) || error.status !== 404) throw error;
      output.err(`Polling endpoint ${known.endpointId} is gone: creating another`);
    }
  }
  const endpoint = (await client.createEndpoint({
    kind: 'polling',
    description: 'hookbase listen',
    eventTypes: options.eventTypes,
  })) as { id: string };
  const state: ListenState = {
    endpointId: endpoint.id,
    secret: `whsec_${randomBytes(32).toString('base64')}`,
  };
  saveState(options, state);
  output.err(`Created polling endpoint ${endpoint.id}`);
  return state;
}

/**
 * Polls the endpoint and forwards each message to the local URL, signed (Standard Webhooks) with
 * the listener's secret, one line per delivery. The cursor is saved after each forwarded message,
 * so SIGINT (which lets the delivery in progress finish) leaves it where the next run continues.
 */
export async function listen(
  client: Hookbase,
  options: ListenOptions,
  output: Output,
): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const state = await endpointFor(client, options, output);
    const signer = new Webhook(state.secret);
    output.err(
      `Forwarding to ${options.forwardTo}; deliveries are signed with ${state.secret}\n` +
        'Ready. Ctrl-C stops; the next run continues where this one stopped.',
    );
    let cursor = state.cursor;
    while (!stop.signal.aborted) {
      let page: { data: unknown[]; nextCursor: string };
      try {
        page = (await client.poll(
          state.endpointId,
          cursor ? { cursor, limit: 50 } : { limit: 50 },
        )) as typeof page;
      } catch (error) {
        if (stop.signal.aborted) break;
        throw error;
      }
      for (const message of page.data as PolledMessage[]) {
        // A stop asked for between deliveries: the cursor stays after the last one forwarded.
        if (stop.signal.aborted) break;
        const line = await forward(signer, message, options);
        output.out(output.json ? JSON.stringify(line) : describe(line));
        cursor = message.cursor;
        saveState(options, { ...state, cursor });
      }
      if (!page.data.length) await idle(options.intervalMs, stop.signal);
    }
    output.err('Stopped; the cursor is saved.');
    return EXIT.ok;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

interface DeliveryLine {
  at: string;
  messageId: string;
  webhookId: string;
  eventType: string;
  status: number | null;
  durationMs: number;
  error?: string;
}

async function forward(
  signer: Webhook,
  message: PolledMessage,
  options: ListenOptions,
): Promise<DeliveryLine> {
  const body = JSON.stringify(message.payload);
  const now = new Date();
  const started = Date.now();
  const line: DeliveryLine = {
    at: now.toISOString(),
    messageId: message.messageId,
    webhookId: message.webhookId,
    eventType: message.eventType,
    status: null,
    durationMs: 0,
  };
  try {
    const response = await fetch(options.forwardTo, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': message.webhookId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signer.sign(message.webhookId, now, body),
        'hookbase-event-type': message.eventType,
        'hookbase-attempt': '1',
      },
      body,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    line.status = response.status;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    line.error = cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
  }
  line.durationMs = Date.now() - started;
  return line;
}

function describe(line: DeliveryLine): string {
  const result = line.status !== null ? String(line.status) : `ERR ${line.error}`;
  return `${line.at}  ${line.webhookId}  ${line.eventType}  -> ${result} (${line.durationMs} ms)`;
}

function idle(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
