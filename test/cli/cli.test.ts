/* eslint-disable @typescript-eslint/no-explicit-any -- CLI JSON output is read loosely, asserted by value */
import { verifyWebhook } from '@hookbase/sdk';
import { createTenant, pollUntil, RunningStack, startStack, TestReceiver } from '@hookbase/testing';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = join(__dirname, '..', '..', 'apps', 'cli', 'bin', 'hookbase.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `hookbase …` as a user would, with its own config directory. */
function hookbase(
  configHome: string,
  args: string[],
  stdin?: string,
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', XDG_CONFIG_HOME: configHome, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

/** A long-running `hookbase listen`, whose lines are collected as they come. */
function startListen(configHome: string, forwardTo: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, 'listen', '--forward-to', forwardTo, '--interval', '200', '--json'],
    {
      env: { PATH: process.env.PATH ?? '', XDG_CONFIG_HOME: configHome },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: any[] = [];
  let stderr = '';
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts.filter(Boolean)) lines.push(JSON.parse(line));
  });
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, stderr: () => stderr, exited };
}

describe('hookbase CLI against the real stack', () => {
  let stack: RunningStack;
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let configHome: string;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  const cli = (args: string[], stdin?: string) => hookbase(configHome, args, stdin);
  const json = async (args: string[], stdin?: string) => {
    const run = await cli([...args, '--json'], stdin);
    if (run.code !== 0) throw new Error(`hookbase ${args.join(' ')} → ${run.code}: ${run.stderr}`);
    return JSON.parse(run.stdout);
  };

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    stack = await startStack();
    tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    configHome = mkdtempSync(join(tmpdir(), 'hookbase-cli-'));
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver.stop();
    if (configHome) rmSync(configHome, { recursive: true, force: true });
  });

  it('refuses to work before login (exit 3), on bad usage (exit 2) and with a wrong key (exit 1, the code)', async () => {
    const notLoggedIn = await cli(['endpoints', 'list']);
    expect(notLoggedIn.code).toBe(3);
    expect(notLoggedIn.stderr).toContain('NOT_LOGGED_IN');

    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['endpoints', 'list', '--bogus'])).code).toBe(2);

    const wrongKey = await cli([
      'login',
      '--api-url',
      stack.url,
      '--api-key',
      'hb_wrong',
      '--org',
      tenant.organizationId,
    ]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('UNAUTHORIZED');
    expect(wrongKey.stderr).toContain('401');

    const closed = new TestReceiver();
    const closedUrl = await closed.start();
    await closed.stop();
    const unreachable = await cli([
      'login',
      '--api-url',
      closedUrl,
      '--api-key',
      'k',
      '--org',
      tenant.organizationId,
    ]);
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toContain('NETWORK_ERROR');
    expect(unreachable.stderr).toContain('ECONNREFUSED');
  });

  it('logs in (config file mode 0600 under XDG_CONFIG_HOME) and shows the organization', async () => {
    const login = await cli([
      'login',
      '--api-url',
      stack.url,
      '--api-key',
      tenant.apiKey,
      '--org',
      tenant.organizationId,
    ]);
    expect(login.code).toBe(0);
    const file = join(configHome, 'hookbase', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      apiUrl: stack.url,
      apiKey: tenant.apiKey,
    });

    const orgs = await json(['orgs']);
    expect(orgs).toEqual([expect.objectContaining({ id: tenant.organizationId, plan: 'pro' })]);
    const table = await cli(['orgs']);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+PLAN/);
    expect(table.stdout).toContain(tenant.organizationId);
  });

  it('manages endpoints, sends from a file and from stdin, lists messages, FIFO state, replays and the DLQ', async () => {
    const endpoint = await json([
      'endpoints',
      'create',
      '--url',
      `${receiverUrl}/cli`,
      '--event-type',
      'cli.test',
      '--fifo',
    ]);
    expect(endpoint).toMatchObject({ kind: 'http', fifoEnabled: true, eventTypes: ['cli.test'] });
    const listed = await cli(['endpoints', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(endpoint.id);

    const file = join(configHome, 'payload.json');
    writeFileSync(file, JSON.stringify({ n: 1 }));
    const fromFile = await json(['send', file, '--type', 'cli.test']);
    expect(fromFile).toMatchObject({ eventType: 'cli.test', duplicate: false });
    const fromStdin = await json(
      ['send'],
      JSON.stringify({ eventType: 'cli.test', payload: { n: 2 }, idempotencyKey: 'cli-2' }),
    );
    expect(fromStdin.idempotencyKey).toBe('cli-2');
    const again = await json(
      ['send', '-'],
      JSON.stringify({ eventType: 'cli.test', payload: { n: 2 }, idempotencyKey: 'cli-2' }),
    );
    expect(again).toMatchObject({ id: fromStdin.id, duplicate: true });

    const badJson = await cli(['send', '--type', 'cli.test'], '{not json');
    expect(badJson.code).toBe(2);
    const invalid = await cli(['send', '--type', 'bad type!'], '{}');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('VALIDATION_FAILED');

    const delivered = await pollUntil(
      async () => {
        const page = await json(['messages', '--endpoint', endpoint.id, '--status', 'succeeded']);
        return page.data.length === 2 && page.data;
      },
      { description: 'both messages delivered' },
    );
    const message = await json(['messages', delivered[0].id]);
    expect(message).toMatchObject({ id: delivered[0].id, status: 'succeeded' });
    const messagesTable = await cli(['messages', '--endpoint', endpoint.id]);
    expect(messagesTable.stdout.split('\n')[0]).toMatch(/^ID\s+ENDPOINTID\s+EVENTTYPE\s+STATUS/);

    const fifo = await json(['fifo-state', endpoint.id]);
    expect(fifo).toMatchObject({ fifoEnabled: true, queueDepth: 0 });
    const fifoTable = await cli(['fifo-state', endpoint.id]);
    expect(fifoTable.stdout).toMatch(/STATE/);

    const copy = await json(['replay', delivered[0].id]);
    expect(copy.replayOf).toBe(delivered[0].id);
    const dlq = await json(['dlq', 'list']);
    expect(dlq.data).toEqual([]);
    const missingDlq = await cli(['dlq', 'retry', 'dlq_00000000000000000000000000']);
    expect(missingDlq.code).toBe(1);
    expect(missingDlq.stderr).toMatch(/NOT_FOUND/);

    const paused = await json([
      'endpoints',
      'update',
      endpoint.id,
      '--status',
      'paused',
      '--fifo',
      'false',
    ]);
    expect(paused).toMatchObject({ status: 'paused', fifoEnabled: false });
    expect((await cli(['endpoints', 'delete', endpoint.id])).code).toBe(0);
    const gone = await cli(['endpoints', 'delete', endpoint.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('ENDPOINT_NOT_FOUND');
  });

  it('event-types import FILE creates the catalog from an OpenAPI document, idempotently; list, get, policy', async () => {
    const file = join(configHome, 'openapi.json');
    const document = {
      openapi: '3.1.0',
      info: { title: 'CLI', version: '1' },
      webhooks: {
        'cli.order.created': {
          post: {
            summary: 'An order',
            requestBody: {
              content: {
                'application/json': {
                  schema: { type: 'object', required: ['id'] },
                  example: { id: 'o1' },
                },
              },
            },
          },
        },
      },
    };
    writeFileSync(file, JSON.stringify(document));
    const first = await cli(['event-types', 'import', file]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('created 1, updated 0, unchanged 0');
    expect(first.stdout).toContain('+ cli.order.created');
    expect(await json(['event-types', 'import', file])).toEqual({
      created: [],
      updated: [],
      unchanged: ['cli.order.created'],
    });
    const table = await cli(['event-types', 'list']);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+VERSION\s+DEPRECATED\s+ARCHIVED/);
    expect(table.stdout).toContain('cli.order.created');
    expect(await json(['event-types', 'get', 'cli.order.created'])).toMatchObject({
      schema: { type: 'object', required: ['id'] },
      example: { id: 'o1' },
    });
    expect(await json(['event-types', 'policy', 'validated'])).toMatchObject({
      eventTypePolicy: 'validated',
    });
    const refused = await cli(['send', '--type', 'cli.order.created'], '{}');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('PAYLOAD_INVALID');
    expect(await json(['event-types', 'policy', 'open'])).toMatchObject({
      eventTypePolicy: 'open',
    });
    expect((await cli(['event-types', 'policy', 'strict'])).code).toBe(2);
    expect((await cli(['event-types', 'import', join(configHome, 'missing.json')])).code).toBe(2);
  });

  it('fifo-state --watch prints a line per refresh until SIGINT', async () => {
    const endpoint = await json(['endpoints', 'create', '--url', `${receiverUrl}/watch`, '--fifo']);
    const child = spawn(
      process.execPath,
      [BIN, 'fifo-state', endpoint.id, '--watch', '--interval', '100', '--json'],
      {
        env: { PATH: process.env.PATH ?? '', XDG_CONFIG_HOME: configHome },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    await pollUntil(() => out.split('\n').filter(Boolean).length >= 3, {
      description: 'three refreshes',
    });
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    for (const line of out.split('\n').filter(Boolean)) {
      expect(JSON.parse(line)).toMatchObject({ fifoEnabled: true, state: expect.any(String) });
    }
  });

  it('listen forwards signed deliveries to a local URL; after SIGINT the next run continues without repeats', async () => {
    const local = new TestReceiver();
    const localUrl = `${await local.start()}/webhooks`;
    try {
      const first = startListen(configHome, localUrl);
      await pollUntil(() => first.stderr().includes('Ready.'), {
        description: 'listen ready',
        timeoutMs: 20_000,
      });
      for (let n = 1; n <= 3; n++)
        await json(['send', '--type', 'listen.test'], JSON.stringify({ n }));
      await pollUntil(() => first.lines.length === 3, {
        description: 'three forwarded deliveries',
      });
      first.child.kill('SIGINT');
      expect(await first.exited).toBe(0);
      expect(first.lines.map((l) => l.status)).toEqual([200, 200, 200]);

      // Published while nobody listens: the next run picks these up, and only these.
      for (let n = 4; n <= 5; n++)
        await json(['send', '--type', 'listen.test'], JSON.stringify({ n }));
      const second = startListen(configHome, localUrl);
      await pollUntil(() => second.lines.length === 2, { description: 'the two new deliveries' });
      await json(['send', '--type', 'listen.test'], JSON.stringify({ n: 6 }));
      await pollUntil(() => second.lines.length === 3, {
        description: 'a delivery while listening',
      });
      expect(second.stderr()).toContain('Reusing polling endpoint');
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);

      // Every delivery verifies with the listener's secret, each message came once, in order.
      const config = JSON.parse(readFileSync(join(configHome, 'hookbase', 'config.json'), 'utf8'));
      const [state] = Object.values(config.listen) as { secret: string }[];
      const events = local.requests.map((r) =>
        verifyWebhook(r.body, r.headers as Record<string, string>, { secret: state.secret }),
      );
      expect(events.map((e) => (e.payload as { n: number }).n)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(new Set(events.map((e) => e.id)).size).toBe(6);
      expect(events.every((e) => e.eventType === 'listen.test')).toBe(true);

      // The endpoint deleted meanwhile: the next run makes another; a refused local URL is a line.
      const { endpointId } = Object.values(config.listen)[0] as { endpointId: string };
      expect((await cli(['endpoints', 'delete', endpointId])).code).toBe(0);
      const closed = new TestReceiver();
      const closedUrl = await closed.start();
      await closed.stop();
      const third = startListen(configHome, `${closedUrl}/webhooks`);
      await pollUntil(() => third.stderr().includes('Ready.'), {
        description: 'third run ready',
        timeoutMs: 20_000,
      });
      expect(third.stderr()).toContain('is gone: creating another');
      await json(['send', '--type', 'listen.test'], JSON.stringify({ n: 7 }));
      await pollUntil(() => third.lines.length === 1, {
        description: 'a line for the refused delivery',
      });
      expect(third.lines[0]).toMatchObject({ status: null, error: 'ECONNREFUSED' });
      third.child.kill('SIGINT');
      expect(await third.exited).toBe(0);
    } finally {
      await local.stop();
    }
  });

  it('manages applications, their endpoints, portal links, publishing to one and purging a payload', async () => {
    const app = await json(['apps', 'create', '--name', 'Globex', '--uid', 'globex']);
    expect(app).toMatchObject({ uid: 'globex', name: 'Globex', retentionDays: null });
    expect((await cli(['apps', 'create', '--name', 'Again', '--uid', 'globex'])).stderr).toContain(
      'APPLICATION_UID_TAKEN',
    );
    const listed = await json(['apps', 'list', '--uid-prefix', 'glob']);
    expect(listed.data.map((a: { id: string }) => a.id)).toEqual([app.id]);
    expect(await json(['apps', 'update', 'globex', '--retention-days', '1'])).toMatchObject({
      retentionDays: 1,
    });
    const endpoint = await json([
      'endpoints',
      'create',
      '--url',
      `${receiverUrl}/globex`,
      '--app',
      'globex',
    ]);
    expect(endpoint.applicationId).toBe(app.id);
    const ofApp = await json(['endpoints', 'list', '--app', 'globex']);
    expect(ofApp.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);

    const sent = await json(['send', '-', '--type', 'cli.app', '--app', 'globex'], '{"n":1}');
    await pollUntil(() => receiver.requests.some((r) => r.path === '/globex'), {
      description: 'the event delivered to the application endpoint',
    });
    // The application's events, messages, DLQ, statistics and replay-failed.
    const events = await json(['events', '--app', 'globex', '--event-type', 'cli.app']);
    expect(events.data.map((e: { id: string }) => e.id)).toEqual([sent.id]);
    expect(events.data[0].payload).toBeUndefined();
    expect((await json(['events', sent.id])).payload).toEqual({ n: 1 });
    expect((await cli(['events', '--app', 'globex'])).stdout).toMatch(
      /^ID\s+EVENTTYPE\s+APPLICATIONID\s+ACCEPTEDAT/,
    );
    expect((await json(['messages', '--app', 'globex'])).data).toEqual([
      expect.objectContaining({ endpointId: endpoint.id, eventId: sent.id }),
    ]);
    expect((await json(['dlq', 'list', '--app', 'globex'])).data).toEqual([]);
    await pollUntil(async () => (await json(['apps', 'stats', 'globex'])).succeeded === 1, {
      description: "the application's statistics count the delivery",
    });
    expect(await json(['apps', 'stats', 'globex'])).toMatchObject({ endpoints: 1, failed: 0 });
    expect(await json(['replay', '--failed', '--app', 'globex'])).toEqual({
      replayed: 0,
      nextAfter: null,
    });
    expect(
      (await cli(['replay', '--failed', '--app', 'globex', '--endpoint', endpoint.id])).code,
    ).toBe(2);

    const unknown = await cli(['send', '-', '--type', 'cli.app', '--app', 'nobody'], '{}');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('APPLICATION_NOT_FOUND');

    const link = await json(['portal', 'globex', '--read-only', '--expires-in', '600']);
    expect(link.url).toContain(`/dashboard/portal/${tenant.organizationId}#token=hbp_`);
    expect(link.readOnly).toBe(true);
    expect(await json(['portal', 'revoke', 'globex'])).toEqual({
      applicationId: app.id,
      revoked: 1,
    });

    await pollUntil(async () => (await cli(['purge-payload', sent.id])).code === 0, {
      description: 'the event recorded, then purged',
    });
    expect(await json(['apps', 'delete', 'globex'])).toEqual({
      id: app.id,
      deleted: true,
      endpointsDeleted: 1,
    });
  });
});
