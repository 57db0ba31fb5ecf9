import { randomBytes } from 'node:crypto';
import { generateCredentialsKey } from '@hookbase/destinations';
import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';

/**
 * What the processes log, over a whole run that handles every kind of secret: the admin token,
 * an API key, an endpoint's signing secret (and the signatures it makes), cloud credentials, the
 * credentials key, and a payload. Every line must be one JSON object with level, time, service
 * and message, and none may hold any of those values, at the most talkative level (debug).
 */
describe('the logs of a full run', () => {
  const credentialsKey = generateCredentialsKey();
  const marker = `payload-marker-${randomBytes(12).toString('hex')}`;
  const awsCredentials = {
    accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
    sessionToken: randomBytes(30).toString('base64url'),
  };
  const ok = new TestReceiver();
  const gone = new TestReceiver();
  let stack: RunningStack;
  let okUrl: string;
  let goneUrl: string;
  const lines: string[] = [];
  let missed = 0;

  beforeAll(async () => {
    ok.respondWith(() => ({ status: 200 }));
    gone.respondWith(() => ({ status: 410, body: 'gone for good' }));
    [okUrl, goneUrl] = await Promise.all([ok.start(), gone.start()]);
    stack = await startStack({
      LOG_LEVEL: 'debug',
      HOOKBASE_CREDENTIALS_KEY: credentialsKey,
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_CONNECT_TIMEOUT_MS: '1000',
      HOOKBASE_DELIVERY_TIMEOUT_MS: '3000',
    });
    missed = stack.process.follow((line) => lines.push(line)).missed;
  });

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([ok.stop(), gone.stop()]);
  });

  it('are JSON lines that never hold a secret, a credential, a signature or a payload', async () => {
    const { organizationId, apiKey, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const created = async (body: Record<string, unknown>): Promise<string> => {
      const response = await client.post(`${org}/webhook-endpoints`, body);
      expect(response.status).toBe(201);
      return response.body.data.id;
    };
    const noRetry = { delaysMs: [0], maxAgeMs: 60_000 };
    const delivered = await created({ url: `${okUrl}/hooks`, eventTypes: ['order.created'] });
    const refused = await created({ url: `${goneUrl}/hooks`, eventTypes: ['order.created'] });
    // A cloud endpoint whose target does not answer: its attempt signs a request with the
    // credentials, fails, and dead-letters the message.
    const cloud = await created({
      kind: 'sqs',
      eventTypes: ['order.created'],
      retry: noRetry,
      config: {
        region: 'us-east-1',
        queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/orders',
        endpoint: 'http://127.0.0.1:9',
        credentials: awsCredentials,
      },
    });
    const secret = await client.get(`${org}/webhook-endpoints/${delivered}/secret`);
    expect(secret.status).toBe(200);
    const signingSecret: string = secret.body.data.key;

    const published = await client.post('/v1/events', {
      eventType: 'order.created',
      payload: { note: marker, card: { number: marker } },
      idempotencyKey: `idem-${marker}`,
    });
    expect(published.status).toBe(202);
    const batch = await client.post('/v1/events/batch', {
      events: [{ eventType: 'order.created', payload: { note: marker } }],
    });
    expect(batch.status).toBe(207);

    await pollUntil(() => ok.requests.length >= 2, {
      timeoutMs: 60_000,
      description: 'both events delivered to the receiver that answers 200',
    });
    const dlq = await pollUntil(
      async () => {
        const page = await client.get(`${org}/dlq`);
        const reasons = new Map<string, string>(
          page.body.data.map((entry: { endpointId: string; reason: string }) => [
            entry.endpointId,
            entry.reason,
          ]),
        );
        return reasons.has(refused) && reasons.has(cloud) ? reasons : undefined;
      },
      { timeoutMs: 90_000, description: 'DLQ entries for the 410 endpoint and the cloud one' },
    );
    expect(dlq.get(refused)).toBe('permanent_failure');
    // Failed requests too: a wrong key, and the admin token where an API key belongs.
    expect((await client.withToken(`hb_${'x'.repeat(43)}`).get(`${org}/messages`)).status).toBe(
      401,
    );
    await client.withToken(stack.adminToken).post('/v1/events', {
      eventType: 'order.created',
      payload: { note: marker },
    });
    await client.post(`${org}/webhook-endpoints/${delivered}/secret/rotate`, { overlapSeconds: 0 });

    // Stopping writes the last lines; everything the process wrote is then in `lines`.
    await stack.process.stop();
    expect(missed).toBe(0);

    const signatures = ok.requests.map((request) => String(request.headers['webhook-signature']));
    const secrets: Record<string, string> = {
      'admin token': stack.adminToken,
      'API key': apiKey,
      'signing secret': signingSecret,
      'signing secret key material': signingSecret.replace(/^whsec_/, ''),
      'credentials key': credentialsKey,
      'AWS access key id': awsCredentials.accessKeyId,
      'AWS secret access key': awsCredentials.secretAccessKey,
      'AWS session token': awsCredentials.sessionToken,
      'payload marker': marker,
      ...Object.fromEntries(signatures.map((signature, i) => [`signature ${i}`, signature])),
    };
    expect(signatures.length).toBeGreaterThanOrEqual(2);
    const found = Object.entries(secrets).flatMap(([name, value]) =>
      lines.filter((line) => line.includes(value)).map((line) => `${name}: ${line}`),
    );
    expect(found).toEqual([]);

    const entries = lines.map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
    for (const entry of entries) {
      expect(entry).toEqual(
        expect.objectContaining({
          level: expect.stringMatching(/^(trace|debug|info|warn|error|fatal)$/),
          time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          service: 'hookbase-standalone',
          message: expect.any(String),
        }),
      );
    }
    // The run was logged: the start, the Kafka clients it reads and writes through, and the
    // failures it handled.
    const messages = entries.map((entry) => String(entry.message));
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^listening on /),
        expect.stringMatching(/^producing through /),
        expect.stringMatching(/^reading \S+\.deliveries through /),
      ]),
    );
  });
});
