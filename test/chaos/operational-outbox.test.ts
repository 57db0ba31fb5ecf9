import { Client } from 'pg';
import {
  createTenant,
  pollUntil,
  RunningStack,
  ScratchKafka,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

/**
 * Operational events survive a Kafka outage: changes made while the broker is down are told to
 * the organization's operational endpoint once it is back (they waited in PostgreSQL's outbox),
 * none lost and none twice. Runs on a broker of its own.
 */
describe('operational events through a Kafka outage', () => {
  const kafka = new ScratchKafka();
  const ops = new TestReceiver();
  let stack: RunningStack;
  let opsUrl: string;

  beforeAll(async () => {
    opsUrl = await ops.start();
    await kafka.start();
    stack = await startStack({
      KAFKA_BROKERS: kafka.brokers,
      HOOKBASE_KAFKA_SESSION_TIMEOUT_MS: '6000',
      HOOKBASE_OPERATIONAL_RELAY_MS: '200',
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await kafka.destroy();
    await ops.stop();
  });

  const waiting = async (): Promise<number> => {
    const client = new Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT count(*)::int AS n FROM operational_outbox');
      return rows[0].n;
    } finally {
      await client.end();
    }
  };

  it('tells of endpoints changed while Kafka was down once it is back', async () => {
    const { organizationId, client } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    const created = await client.post(`${org}/operational-webhook-endpoints`, {
      url: `${opsUrl}/ops`,
    });
    expect(created.status).toBe(201);
    const received = () => ops.requests.map((r) => JSON.parse(r.body));
    // The pipeline works: an endpoint created before the outage is told of.
    const before = await client.post(`${org}/webhook-endpoints`, {
      url: 'http://127.0.0.1:9/before',
    });
    expect(before.status).toBe(201);
    await pollUntil(
      () =>
        received().some(
          (e) => e.type === 'endpoint.created' && e.data.endpointId === before.body.data.id,
        ),
      { description: 'endpoint.created before the outage', timeoutMs: 30_000 },
    );

    await kafka.stop();
    const during = await client.post(`${org}/webhook-endpoints`, {
      url: 'http://127.0.0.1:9/during',
    });
    expect(during.status).toBe(201);
    const id = during.body.data.id;
    expect(
      (await client.patch(`${org}/webhook-endpoints/${id}`, { status: 'disabled' })).status,
    ).toBe(200);
    // created, updated and disabled wait in PostgreSQL while the relay cannot reach Kafka.
    await pollUntil(async () => (await waiting()) === 3, {
      description: 'three operational events waiting in the outbox',
    });
    expect(received().some((e) => e.data.endpointId === id)).toBe(false);

    await kafka.start();
    await pollUntil(
      () => {
        const about = received().filter((e) => e.data.endpointId === id);
        return (
          about.some((e) => e.type === 'endpoint.disabled') &&
          about.some((e) => e.type === 'endpoint.created')
        );
      },
      { description: 'the events of the outage delivered', timeoutMs: 120_000, intervalMs: 500 },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\nHookbase's last log lines:\n${stack.process.logs(150)}`);
    });
    await pollUntil(async () => (await waiting()) === 0, { description: 'the outbox drained' });
    const about = received().filter((e) => e.data.endpointId === id);
    expect(about.map((e) => e.type).sort()).toEqual([
      'endpoint.created',
      'endpoint.disabled',
      'endpoint.updated',
    ]);
    expect(about.find((e) => e.type === 'endpoint.disabled').data.reason).toBe('manual');
  });
});
