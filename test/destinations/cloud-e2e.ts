import { generateCredentialsKey } from '@hookbase/destinations';
import { ApiClient, createTenant, pollUntil, RunningStack, startStack } from '@hookbase/testing';
import { Client } from 'pg';

/**
 * What the cloud destination end-to-end tests share: a Hookbase stack with a credentials key and
 * short timings, a `pro` tenant (FIFO), and the API calls the tests make. The emulators (moto,
 * pstest) are the tests' own business.
 */

/** Retries every 400 ms up to 20 attempts: bounded, yet longer than any outage a test makes. */
export const QUICK_RETRY = { delaysMs: [0, ...Array<number>(19).fill(400)], maxAgeMs: 600_000 };
/** One attempt: a failure is final at once (max_attempts), a permanent one permanent_failure. */
export const NO_RETRY = { delaysMs: [0], maxAgeMs: 600_000 };

export interface Attempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  outcome: 'succeeded' | 'retry' | 'failed';
  responseStatus: number | null;
  error: string | null;
}

export interface CloudE2e {
  stack: RunningStack;
  client: ApiClient;
  org: string;
  /** Creates an endpoint and returns its id (asserting 201). */
  endpoint(body: Record<string, unknown>): Promise<string>;
  /** Publishes an event and returns its id (asserting 202). */
  publish(eventType: string, payload: Record<string, unknown>): Promise<string>;
  /** The message the event became for the endpoint, once the fan-out recorded it. */
  messageOf(eventId: string, endpointId: string): Promise<{ id: string; status: string }>;
  attemptsOf(messageId: string): Promise<Attempt[]>;
  /** Waits for the message to be delivered and returns its attempts. */
  delivered(eventId: string, endpointId: string, timeoutMs?: number): Promise<Attempt[]>;
  dlqEntries(
    endpointId: string,
  ): Promise<{ messageId: string; reason: string; lastError: string }[]>;
  /** The endpoint's row as stored (to check that credentials are encrypted at rest). */
  storedConfig(endpointId: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** `env`: more of the stack's environment (e.g. a host identity of its own). */
export async function startCloudE2e(env: Record<string, string> = {}): Promise<CloudE2e> {
  const stack = await startStack({
    HOOKBASE_CREDENTIALS_KEY: generateCredentialsKey(),
    HOOKBASE_RETRY_POLL_MS: '100',
    HOOKBASE_HOLD_RECHECK_MS: '300',
    HOOKBASE_FIFO_SWEEP_MS: '200',
    HOOKBASE_DELIVERY_TIMEOUT_MS: '3000',
    HOOKBASE_CONNECT_TIMEOUT_MS: '1000',
    // The outage tests count retries, not a circuit breaker's skips.
    HOOKBASE_CIRCUIT_FAILURE_THRESHOLD: '1000',
    ...env,
  });
  const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
  const client = tenant.client;
  const org = `/api/organizations/${tenant.organizationId}`;

  const messageOf = (eventId: string, endpointId: string) =>
    pollUntil(
      async () => {
        const event = await client.get(`${org}/events/${eventId}`);
        return (event.body.data?.messages as { id: string; endpointId: string; status: string }[])
          ?.filter((message) => message.endpointId === endpointId)
          .at(0);
      },
      { description: `the message of ${eventId} for ${endpointId}` },
    );

  const attemptsOf = async (messageId: string): Promise<Attempt[]> =>
    (await client.get(`${org}/messages/${messageId}`)).body.data.attemptHistory;

  return {
    stack,
    client,
    org,
    async endpoint(body) {
      const response = await client.post(`${org}/webhook-endpoints`, body);
      if (response.status !== 201) {
        throw new Error(`creating endpoint: ${response.status} ${JSON.stringify(response.body)}`);
      }
      return response.body.data.id;
    },
    async publish(eventType, payload) {
      const response = await client.post('/v1/events', { eventType, payload });
      if (response.status !== 202) {
        throw new Error(`publishing: ${response.status} ${JSON.stringify(response.body)}`);
      }
      return response.body.data.id;
    },
    messageOf,
    attemptsOf,
    async delivered(eventId, endpointId, timeoutMs = 30_000) {
      const { id } = await messageOf(eventId, endpointId);
      return pollUntil(
        async () => {
          const message = (await client.get(`${org}/messages/${id}`)).body.data;
          return message.status === 'succeeded' ? (message.attemptHistory as Attempt[]) : false;
        },
        { timeoutMs, description: `message ${id} succeeded` },
      );
    },
    async dlqEntries(endpointId) {
      return (await client.get(`${org}/dlq?endpointId=${endpointId}`)).body.data;
    },
    async storedConfig(endpointId) {
      const db = new Client({ connectionString: stack.databaseUrl });
      await db.connect();
      try {
        const { rows } = await db.query('SELECT config FROM endpoints WHERE id = $1', [endpointId]);
        return rows[0].config;
      } finally {
        await db.end();
      }
    },
    stop: () => stack.stop(),
  };
}

/** Attempts in the order they started, each finished before the next began (one in flight). */
export function sentOneAtATime(attempts: Attempt[]): boolean {
  const sorted = [...attempts].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  return sorted.every(
    (attempt, i) =>
      i === 0 ||
      Date.parse(sorted[i - 1].startedAt) + sorted[i - 1].durationMs <=
        Date.parse(attempt.startedAt) + 1,
  );
}

/**
 * A FIFO endpoint's sends, per event in publish order: each event's attempts all started (and
 * ended) before the next event's first attempt, and no two attempts overlapped.
 */
export function sentInPublishOrder(perEvent: Attempt[][]): boolean {
  const flat = perEvent.flat();
  const start = (a: Attempt) => Date.parse(a.startedAt);
  return (
    sentOneAtATime(flat) &&
    perEvent.every(
      (attempts, i) =>
        i === 0 || Math.max(...perEvent[i - 1].map(start)) <= Math.min(...attempts.map(start)),
    )
  );
}
