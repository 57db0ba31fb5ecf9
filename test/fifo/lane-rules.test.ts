import {
  ApiClient,
  createTenant,
  pollUntil,
  ReceivedRequest,
  RunningStack,
  ScriptedResponse,
  startStack,
  TestReceiver,
} from '@hookbase/testing';

const RECHECK_MS = 300;
const CIRCUIT_THRESHOLD = 2;
const COOLDOWN_MS = 1_500;
// Business organizations keep their log for about 4 seconds in this stack (fifo_expired).
const BUSINESS_RETENTION_DAYS = 4 / 86_400;

type Behaviour = (request: ReceivedRequest) => ScriptedResponse;

/** The body of `GET .../fifo-state` (API.md). */
interface FifoState {
  fifoEnabled: boolean;
  state: string;
  blocked: boolean;
  blockedReason: string | null;
  queueDepth: number;
  waitingCount: number;
  oldestQueuedAt: string | null;
  lagSeconds: number;
  head: { status: string; attempts: number; nextAttemptAt: string | null } | null;
  leaseSeconds: number;
}

/**
 * Every rule of a FIFO lane (reference/fifo-ordering.txt), each against the running system with
 * its timings shortened by configuration.
 */
describe('FIFO lane rules', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  const behaviours = new Map<string, Behaviour>();
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let org: string;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith((request) => behaviours.get(request.path)?.(request) ?? { status: 200 });
    stack = await startStack({
      HOOKBASE_HOLD_RECHECK_MS: String(RECHECK_MS),
      HOOKBASE_FIFO_SWEEP_MS: '200',
      HOOKBASE_RETRY_POLL_MS: '100',
      HOOKBASE_CIRCUIT_FAILURE_THRESHOLD: String(CIRCUIT_THRESHOLD),
      HOOKBASE_CIRCUIT_COOLDOWN_MS: String(COOLDOWN_MS),
      HOOKBASE_RETENTION_DAYS_BUSINESS: String(BUSINESS_RETENTION_DAYS),
    });
    tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    org = `/api/organizations/${tenant.organizationId}`;
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
  });

  const seenAt = (path: string) => receiver.requests.filter((r) => r.path === path);
  const payloadsAt = (path: string) =>
    seenAt(path).map((r) => JSON.parse(r.body) as Record<string, unknown>);
  /** First-seen order of payload `n` at a path. */
  const firstSeen = (path: string) => {
    const ids = new Set<string>();
    const order: unknown[] = [];
    for (const request of seenAt(path)) {
      const id = String(request.headers['webhook-id']);
      if (ids.has(id)) continue;
      ids.add(id);
      order.push((JSON.parse(request.body) as { n: unknown }).n);
    }
    return order;
  };

  async function fifoEndpoint(
    path: string,
    behaviour: Behaviour,
    options: {
      delaysMs?: number[];
      client?: ApiClient;
      orgPath?: string;
      eventTypes?: string[];
    } = {},
  ): Promise<string> {
    behaviours.set(path, behaviour);
    const response = await (options.client ?? tenant.client).post(
      `${options.orgPath ?? org}/webhook-endpoints`,
      {
        url: `${receiverUrl}${path}`,
        fifoEnabled: true,
        eventTypes: options.eventTypes ?? [path.slice(1)],
        retry: { delaysMs: options.delaysMs ?? [0, 60_000], maxAgeMs: 600_000 },
      },
    );
    expect(response.status).toBe(201);
    return response.body.data.id;
  }

  async function send(eventType: string, payload: Record<string, unknown>, client = tenant.client) {
    const response = await client.post('/v1/events', { eventType, payload });
    expect(response.status).toBe(202);
    return response.body.data.id as string;
  }

  const fifoState = async (
    endpointId: string,
    orgPath = org,
    client = tenant.client,
  ): Promise<FifoState> =>
    (await client.get(`${orgPath}/webhook-endpoints/${endpointId}/fifo-state`)).body.data;

  const waitForState = (
    endpointId: string,
    check: (state: FifoState) => boolean,
    description: string,
    orgPath = org,
    client = tenant.client,
  ) =>
    pollUntil(
      async () => {
        const state = await fifoState(endpointId, orgPath, client);
        return check(state) ? state : undefined;
      },
      { intervalMs: 50, timeoutMs: 20_000, description },
    );

  const dlqOf = async (
    endpointId: string,
    reason?: string,
    orgPath = org,
    client = tenant.client,
  ) =>
    (
      await client.get(
        `${orgPath}/dlq?endpointId=${endpointId}${reason ? `&reason=${reason}` : ''}&limit=250`,
      )
    ).body.data as { messageId: string; reason: string; eventType: string }[];

  it('holds everything behind a failing head (fifo_waiting), then delivers in order', async () => {
    let healthy = false;
    const endpointId = await fifoEndpoint('/hol', () => ({ status: healthy ? 200 : 503 }), {
      delaysMs: [0, 1_000, 1_000, 1_000, 1_000],
    });
    for (let n = 0; n < 5; n++) await send('hol', { n });
    const blocked = await waitForState(
      endpointId,
      (s) => s.blockedReason === 'retrying' && s.queueDepth === 5,
      'the head retrying with 5 queued',
    );
    expect(blocked).toMatchObject({
      fifoEnabled: true,
      state: 'blocked',
      blocked: true,
      waitingCount: 4,
      leaseSeconds: 300,
      head: {
        status: 'awaiting_retry',
        maxAttempts: 5,
        lastResponseStatus: 503,
        lastError: 'HTTP 503',
      },
    });
    expect(blocked.head!.attempts).toBeGreaterThanOrEqual(1);
    expect(Date.parse(blocked.head!.nextAttemptAt!)).toBeGreaterThan(Date.now() - 1_000);
    expect(blocked.lagSeconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(blocked.oldestQueuedAt!)).not.toBeNaN();
    const waiting = (
      await tenant.client.get(`${org}/messages?endpointId=${endpointId}&status=fifo_waiting`)
    ).body.data;
    expect(waiting).toHaveLength(4);
    // Only the head was ever sent.
    expect(new Set(seenAt('/hol').map((r) => r.headers['webhook-id'])).size).toBe(1);

    healthy = true;
    await pollUntil(async () => firstSeen('/hol').length === 5, { description: 'all 5 delivered' });
    expect(firstSeen('/hol')).toEqual([0, 1, 2, 3, 4]);
    await waitForState(endpointId, (s) => s.state === 'idle' && s.queueDepth === 0, 'idle');
  });

  it('moves a head that used up its attempts to the DLQ and carries on with the next', async () => {
    const endpointId = await fifoEndpoint(
      '/exhaust',
      (request) => ({ status: (JSON.parse(request.body) as { n: number }).n === 0 ? 503 : 200 }),
      { delaysMs: [0, 50, 50] },
    );
    for (let n = 0; n < 4; n++) await send('exhaust', { n });
    await pollUntil(async () => firstSeen('/exhaust').length === 4, {
      description: 'every message tried',
    });
    expect(firstSeen('/exhaust')).toEqual([0, 1, 2, 3]);
    // The head was tried 3 times before anything behind it was sent.
    const order = payloadsAt('/exhaust').map((p) => p.n);
    expect(order).toEqual([0, 0, 0, 1, 2, 3]);
    const dead = await pollUntil(
      async () => {
        const entries = await dlqOf(endpointId);
        return entries.length === 1 ? entries : undefined;
      },
      { description: 'the exhausted head in the DLQ' },
    );
    expect(dead[0].reason).toBe('max_attempts');
  });

  it('keeps the queue while the circuit is open: the head waits out the cooldown without an attempt', async () => {
    let healthy = false;
    const endpointId = await fifoEndpoint('/circuit', () => ({ status: healthy ? 200 : 503 }), {
      delaysMs: [0, 50, 50, 50, 50, 50, 50, 50],
    });
    for (let n = 0; n < 3; n++) await send('circuit', { n });
    const open = await waitForState(
      endpointId,
      (s) => s.blockedReason === 'circuit_open',
      'the lane blocked by the open circuit',
    );
    expect(open).toMatchObject({ state: 'blocked', blocked: true, queueDepth: 3 });
    expect(open.head!.attempts).toBe(CIRCUIT_THRESHOLD);
    expect(seenAt('/circuit')).toHaveLength(CIRCUIT_THRESHOLD);
    healthy = true;
    await pollUntil(async () => firstSeen('/circuit').length === 3, {
      description: 'the queue continues after the probe',
    });
    expect(firstSeen('/circuit')).toEqual([0, 1, 2]);
    // One probe for the head after the cooldown: no attempt was spent while the circuit was open.
    expect(seenAt('/circuit')).toHaveLength(CIRCUIT_THRESHOLD + 3);
    expect(await dlqOf(endpointId)).toHaveLength(0);
  });

  it('pauses the queue of a disabled endpoint, queues nothing new, and delivers in order once enabled', async () => {
    let healthy = false;
    const endpointId = await fifoEndpoint('/disabled', () => ({ status: healthy ? 200 : 503 }), {
      delaysMs: [0, 1_000],
    });
    // A second, unordered endpoint sees every event: it shows when fan-out has handled one.
    behaviours.set('/witness', () => ({ status: 200 }));
    await tenant.client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/witness`,
      eventTypes: ['disabled'],
    });
    for (let n = 0; n < 3; n++) await send('disabled', { n });
    await waitForState(endpointId, (s) => s.blockedReason === 'retrying', 'head retrying');
    await tenant.client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'disabled' });
    const paused = await waitForState(endpointId, (s) => s.state === 'paused', 'paused');
    expect(paused).toMatchObject({ blocked: true, blockedReason: 'disabled', queueDepth: 3 });
    await send('disabled', { n: 'while-disabled' });
    await pollUntil(async () => seenAt('/witness').length === 4, {
      description: 'fan-out handled the event sent while disabled',
    });
    expect((await fifoState(endpointId)).queueDepth).toBe(3);
    healthy = true;
    // Held: nothing is sent while disabled, not even the head's due retry.
    const before = seenAt('/disabled').length;
    const due = Date.parse((await fifoState(endpointId)).head!.nextAttemptAt!);
    await pollUntil(async () => Date.now() > due + 2 * RECHECK_MS, {
      description: "the head's retry time passed while disabled",
    });
    expect(seenAt('/disabled').length).toBe(before);
    await tenant.client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'active' });
    await pollUntil(async () => firstSeen('/disabled').length === 3, {
      description: 'queued messages delivered after enabling',
    });
    expect(firstSeen('/disabled')).toEqual([0, 1, 2]);
    expect(seenAt('/disabled').length).toBe(before + 3);
  });

  it('holds a paused endpoint queue, new messages included, and resumes in order', async () => {
    const endpointId = await fifoEndpoint('/paused', () => ({ status: 200 }));
    await tenant.client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'paused' });
    for (let n = 0; n < 3; n++) await send('paused', { n });
    const paused = await waitForState(
      endpointId,
      (s) => s.queueDepth === 3,
      'three queued while paused',
    );
    expect(paused).toMatchObject({ state: 'paused', blocked: true, blockedReason: 'paused' });
    expect(seenAt('/paused')).toHaveLength(0);
    await tenant.client.patch(`${org}/webhook-endpoints/${endpointId}`, { status: 'active' });
    await pollUntil(async () => firstSeen('/paused').length === 3, { description: 'resumed' });
    expect(firstSeen('/paused')).toEqual([0, 1, 2]);
  });

  it('turning FIFO on orders what follows; turning it off hands the queue back, nothing dropped', async () => {
    let healthy = false;
    behaviours.set('/toggle', () => ({ status: healthy ? 200 : 503 }));
    const created = await tenant.client.post(`${org}/webhook-endpoints`, {
      url: `${receiverUrl}/toggle`,
      eventTypes: ['toggle'],
      // The head's retry is a minute away when FIFO goes off.
      retry: { delaysMs: [0, 60_000, 60_000], maxAgeMs: 600_000 },
    });
    const endpointId: string = created.body.data.id;
    expect(created.body.data.fifoEnabled).toBe(false);
    const on = await tenant.client.patch(`${org}/webhook-endpoints/${endpointId}`, {
      fifoEnabled: true,
    });
    expect(on.body.data.fifoEnabled).toBe(true);
    for (let n = 0; n < 4; n++) await send('toggle', { n });
    await waitForState(
      endpointId,
      (s) => s.queueDepth === 4 && s.blockedReason === 'retrying',
      'four queued behind a failing head',
    );
    expect(new Set(seenAt('/toggle').map((r) => r.headers['webhook-id'])).size).toBe(1);

    healthy = true;
    const offAt = Date.now();
    const off = await tenant.client.patch(`${org}/webhook-endpoints/${endpointId}`, {
      fifoEnabled: false,
    });
    expect(off.body.data.fifoEnabled).toBe(false);
    // Every one of them succeeds at once, the head that waited for its retry too.
    await pollUntil(
      async () =>
        (await tenant.client.get(`${org}/messages?endpointId=${endpointId}&status=succeeded`)).body
          .data.length === 4,
      { timeoutMs: 20_000, description: 'every queued message delivered after FIFO off' },
    );
    const succeeded = seenAt('/toggle').filter((r) => r.receivedAt > offAt);
    expect(new Set(succeeded.map((r) => (JSON.parse(r.body) as { n: number }).n))).toEqual(
      new Set([0, 1, 2, 3]),
    );
    expect(await fifoState(endpointId)).toMatchObject({ fifoEnabled: false, queueDepth: 0 });
    expect(await dlqOf(endpointId)).toHaveLength(0);
  });

  it('keeps FIFO on through a plan downgrade; off is always allowed, on again needs the plan', async () => {
    const admin = new ApiClient(stack.url, stack.adminToken);
    const pro = await createTenant(stack.url, stack.adminToken, 'pro');
    const proOrg = `/api/organizations/${pro.organizationId}`;
    const endpointId = await fifoEndpoint('/downgrade', () => ({ status: 200 }), {
      client: pro.client,
      orgPath: proOrg,
    });
    expect((await admin.patch(proOrg, { plan: 'free' })).status).toBe(200);
    const kept = await pro.client.get(`${proOrg}/webhook-endpoints/${endpointId}`);
    expect(kept.body.data.fifoEnabled).toBe(true);
    await send('downgrade', { n: 0 }, pro.client);
    await send('downgrade', { n: 1 }, pro.client);
    await pollUntil(async () => firstSeen('/downgrade').length === 2, {
      description: 'still delivered through the lane after the downgrade',
    });
    const off = await pro.client.patch(`${proOrg}/webhook-endpoints/${endpointId}`, {
      fifoEnabled: false,
    });
    expect(off.status).toBe(200);
    const again = await pro.client.patch(`${proOrg}/webhook-endpoints/${endpointId}`, {
      fifoEnabled: true,
    });
    expect(again.status).toBe(403);
    expect(again.body.error.code).toBe('PLAN_REQUIRED');
  });

  it('sends replays outside the lane at once, neither waiting behind nor holding up the queue', async () => {
    const endpointId = await fifoEndpoint('/replay', (request) => ({
      status: (JSON.parse(request.body) as { block?: boolean }).block ? 503 : 200,
    }));
    await send('replay', { n: 0 });
    await pollUntil(async () => firstSeen('/replay').length === 1, {
      description: 'first delivered',
    });
    const [delivered] = (
      await tenant.client.get(`${org}/messages?endpointId=${endpointId}&status=succeeded`)
    ).body.data;
    await send('replay', { n: 1, block: true });
    await send('replay', { n: 2 });
    await waitForState(
      endpointId,
      (s) => s.queueDepth === 2 && s.blockedReason === 'retrying',
      'blocked behind n=1',
    );
    const replay = await tenant.client.post(`${org}/messages/${delivered.id}/replay`);
    expect(replay.status).toBe(202);
    await pollUntil(async () => payloadsAt('/replay').filter((p) => p.n === 0).length === 2, {
      description: 'the replay copy delivered while the queue is blocked',
    });
    expect((await fifoState(endpointId)).queueDepth).toBe(2);
    expect(payloadsAt('/replay').some((p) => p.n === 2)).toBe(false);
  });

  it("sends an endpoint's failed messages replayed, and a DLQ retry, outside the lane while its queue is blocked", async () => {
    // The receiver refuses the `refuse` messages for good (dead-lettered) until told otherwise.
    let refusing = true;
    const endpointId = await fifoEndpoint('/replay-failed', (request) => {
      const body = JSON.parse(request.body) as { refuse?: boolean; block?: boolean };
      if (body.refuse && refusing) return { status: 400 };
      return { status: body.block ? 503 : 200 };
    });
    await send('replay-failed', { n: 0, refuse: true });
    await send('replay-failed', { n: 1, refuse: true });
    const failed = await pollUntil(
      async () => {
        const entries = await dlqOf(endpointId, 'permanent_failure');
        return entries.length === 2 ? entries : undefined;
      },
      { description: 'both refused messages dead-lettered' },
    );
    await send('replay-failed', { n: 2, block: true });
    await send('replay-failed', { n: 3 });
    await waitForState(
      endpointId,
      (state) => state.queueDepth === 2 && state.blockedReason === 'retrying',
      'blocked behind n=2',
    );
    // The receiver now takes what it refused before.
    refusing = false;
    const [first] = failed;
    const replayFailed = await tenant.client.post(
      `${org}/webhook-endpoints/${endpointId}/replay-failed`,
      {},
    );
    expect(replayFailed.status).toBe(202);
    const dlqEntries = (await tenant.client.get(`${org}/dlq?endpointId=${endpointId}&limit=250`))
      .body.data as { id: string; messageId: string }[];
    const retried = await tenant.client.post(
      `${org}/dlq/${dlqEntries.find((entry) => entry.messageId === first.messageId)!.id}/retry`,
    );
    expect(retried.status).toBe(202);
    // Both refused messages arrive again (replay-failed), and n=0 once more (the DLQ retry),
    // while the queue stays blocked behind n=2 with n=3 waiting.
    await pollUntil(
      async () => {
        const accepted = payloadsAt('/replay-failed').filter((p) => p.refuse === true);
        return accepted.length >= 2 + 2 + 1 || undefined;
      },
      { description: 'the replayed and retried copies delivered' },
    );
    expect((await fifoState(endpointId)).queueDepth).toBe(2);
    expect(payloadsAt('/replay-failed').some((p) => p.n === 3)).toBe(false);
  });

  it('moves queued messages to the DLQ when the endpoint is deleted', async () => {
    const endpointId = await fifoEndpoint('/deleted', () => ({ status: 503 }));
    for (let n = 0; n < 3; n++) await send('deleted', { n });
    await waitForState(endpointId, (s) => s.queueDepth === 3, 'three queued');
    expect((await tenant.client.delete(`${org}/webhook-endpoints/${endpointId}`)).status).toBe(200);
    const dead = await pollUntil(
      async () => {
        const entries = await dlqOf(endpointId, 'endpoint_deleted');
        return entries.length === 3 ? entries : undefined;
      },
      { description: 'three endpoint_deleted entries' },
    );
    expect(dead.map((d) => d.eventType)).toEqual(['deleted', 'deleted', 'deleted']);
  });

  it('moves a message still queued at the end of retention to the DLQ as fifo_expired', async () => {
    const business = await createTenant(stack.url, stack.adminToken, 'business');
    const businessOrg = `/api/organizations/${business.organizationId}`;
    const endpointId = await fifoEndpoint('/expired', () => ({ status: 503 }), {
      client: business.client,
      orgPath: businessOrg,
    });
    for (let n = 0; n < 3; n++) await send('expired', { n }, business.client);
    const expired = await pollUntil(
      async () => {
        const entries = await dlqOf(endpointId, 'fifo_expired', businessOrg, business.client);
        return entries.length === 3 ? entries : undefined;
      },
      { timeoutMs: 30_000, description: 'three fifo_expired entries' },
    );
    expect(expired).toHaveLength(3);
    const state = await fifoState(endpointId, businessOrg, business.client);
    expect(state).toMatchObject({ state: 'idle', queueDepth: 0 });
  });
});
