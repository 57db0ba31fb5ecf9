#!/usr/bin/env node
/**
 * The outbox relay as a command of its own, configured by environment variables (see the SDK
 * README): the package's `hookbase-outbox-relay` bin, and `hookbase outbox-relay` in the CLI.
 * Stops on SIGTERM/SIGINT after the event in hand.
 */
import { z } from 'zod';
import { Hookbase } from '../client/hookbase';
import { HookbaseEventSender } from './event-sender';
import { OutboxRelay, RelayLogEntry } from './relay';

const whole = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const relayEnvironmentSchema = z.object({
  HOOKBASE_OUTBOX_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  HOOKBASE_URL: z.url({ protocol: /^https?$/ }),
  HOOKBASE_API_KEY: z.string().min(1),
  HOOKBASE_OUTBOX_BATCH_SIZE: whole(1, 1000, 100),
  HOOKBASE_OUTBOX_IDLE_MS: whole(10, 3_600_000, 1000),
  HOOKBASE_OUTBOX_BACKOFF_MAX_MS: whole(100, 3_600_000, 30_000),
  HOOKBASE_OUTBOX_REQUEST_TIMEOUT_MS: whole(100, 600_000, 10_000),
  /** Tests only: after Hookbase accepted an event, say so and wait forever before marking it sent. */
  HOOKBASE_OUTBOX_TEST_HOLD_AFTER_ACCEPT: z.enum(['true', 'false']).default('false'),
});

function log(entry: RelayLogEntry): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

/**
 * Runs the relay configured by `env` until SIGTERM or SIGINT, then answers 0 once it stopped; 2 at
 * once (the reasons on stderr) when the configuration is invalid.
 */
export async function runRelay(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const relay = startRelay(env);
  if (!relay) return 2;
  return new Promise((resolve) => {
    const stop = () => {
      process.removeListener('SIGTERM', stop);
      process.removeListener('SIGINT', stop);
      log({ level: 'info', message: 'stopping' });
      void relay.stop().then(() => {
        log({ level: 'info', message: 'stopped' });
        resolve(0);
      });
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

/** The relay started from `env`, or null (the reasons on stderr) when the configuration is invalid. */
export function startRelay(env: NodeJS.ProcessEnv = process.env): OutboxRelay | null {
  const parsed = relayEnvironmentSchema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      process.stderr.write(`configuration: ${issue.path.join('.')}: ${issue.message}\n`);
    }
    return null;
  }
  const config = parsed.data;
  const relay = new OutboxRelay({
    database: config.HOOKBASE_OUTBOX_DATABASE_URL,
    sender: new HookbaseEventSender(
      new Hookbase({
        baseUrl: config.HOOKBASE_URL,
        apiKey: config.HOOKBASE_API_KEY,
        timeoutMs: config.HOOKBASE_OUTBOX_REQUEST_TIMEOUT_MS,
      }),
    ),
    batchSize: config.HOOKBASE_OUTBOX_BATCH_SIZE,
    idleMs: config.HOOKBASE_OUTBOX_IDLE_MS,
    backoff: { baseMs: 250, maxMs: config.HOOKBASE_OUTBOX_BACKOFF_MAX_MS, growth: 'doubling' },
    log,
    ...(config.HOOKBASE_OUTBOX_TEST_HOLD_AFTER_ACCEPT === 'true'
      ? {
          afterAccepted: (event) => {
            log({ level: 'info', message: `accepted ${event.id}, holding before marking sent` });
            return new Promise<void>(() => undefined);
          },
        }
      : {}),
  });
  relay.start();
  log({ level: 'info', message: 'outbox relay started' });
  return relay;
}

if (require.main === module) {
  void runRelay().then((code) => {
    process.exitCode = code;
  });
}
