import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createTenant, pollUntil, RunningStack, startStack } from '@hookbase/testing';
import { codeBlocks, sample } from './samples';

/**
 * The quickstart's and the receiving guide's commands and code, taken from the Markdown and run
 * against the real stack: the shell session as written (only the address, the admin token and
 * the receiver's port are put in), and each signature sample as a receiver that must verify a
 * real delivery and refuse a forged one.
 */
const ROOT = join(__dirname, '..', '..');
const WORK = join(ROOT, '.cache', 'docs-samples');
const GO_LIBRARY = 'github.com/standard-webhooks/standard-webhooks/libraries@v1.3.0';
const PYTHON_LIBRARY = 'standardwebhooks==1.1.0';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A process in a group of its own, with its output collected; stopped with its children. */
function run(command: string, args: string[], env: Record<string, string> = {}, cwd = ROOT) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { text: '' };
  child.stdout!.on('data', (chunk) => (output.text += chunk));
  child.stderr!.on('data', (chunk) => (output.text += chunk));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  return { child, output, exited };
}

function stop(child: ChildProcess | undefined) {
  if (child?.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

describe('the quickstart and receiving guide, as written', () => {
  let stack: RunningStack;
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    mkdirSync(WORK, { recursive: true });
    stack = await startStack();
  });

  afterAll(async () => {
    for (const child of started) stop(child);
    await stack?.stop();
  });

  it('starts with the two commands', () => {
    const first = codeBlocks('quickstart.md').find((b) => b.lang === 'sh');
    expect(first?.code).toBe('npm install\nnpm start\n');
  });

  it('creates an organization, a key and an endpoint, and delivers an event to the receiver', async () => {
    const port = await freePort();
    const [receiverCommand, session, ...rest] = codeBlocks('quickstart.md')
      .filter((b) => b.lang === 'sh' && !b.code.startsWith('npm install'))
      .map((b) => b.code);
    // The receiver first, in a terminal of its own, listening before anything is published.
    expect(receiverCommand).toBe('npm run receiver -- --port 4000\n');
    const receiver = run('bash', ['-c', receiverCommand.replace(/4000/g, String(port))]);
    started.push(receiver.child);
    await pollUntil(
      () =>
        receiver.output.text.includes(`listening on http://127.0.0.1:${port}`) ||
        receiver.child.exitCode !== null,
      { timeoutMs: 60_000, description: 'the quickstart receiver listening' },
    );
    expect(receiver.output.text).toContain(`listening on http://127.0.0.1:${port}`);
    // The session up to the publish; its variables kept for the commands further down the page.
    const variables = join(WORK, `quickstart-${port}.env`);
    mkdirSync(WORK, { recursive: true });
    const publish = run('bash', [
      '-c',
      [
        'set -e',
        session
          .replace(/^HOOKBASE=.*$/m, `HOOKBASE=${stack.url}`)
          .replace(/^ADMIN=.*$/m, `ADMIN=${stack.adminToken}`)
          .replace(/4000/g, String(port)),
        `declare -p HOOKBASE ORG KEY ENDPOINT > ${variables}`,
      ].join('\n'),
    ]);
    started.push(publish.child);
    expect(await publish.exited).toBe(0);
    expect(publish.output.text).toMatch(/"eventType":"order\.created"/);
    await pollUntil(() => /order\.created id=msg_\S+ attempt=1/.test(receiver.output.text), {
      timeoutMs: 60_000,
      description: 'the quickstart receiver printing the delivery',
    });
    // Then, as the page goes on: the message log (with the attempt) and the signing secret.
    const after = run('bash', ['-c', ['set -e', `source ${variables}`, ...rest].join('\n')]);
    started.push(after.child);
    expect(await after.exited).toBe(0);
    expect(after.output.text).toMatch(/"eventType":"order\.created"/);
    expect(after.output.text).toMatch(/"key":"whsec_/);
    stop(receiver.child);
  });

  /** A receiver sample started with a secret and a port; a real delivery must be verified by it. */
  async function checkReceiver(name: string, command: string, args: string[], cwd: string) {
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const port = await freePort();
    const org = `/api/organizations/${tenant.organizationId}`;
    const endpoint = await tenant.client.post(`${org}/webhook-endpoints`, {
      url: `http://127.0.0.1:${port}/hooks`,
    });
    expect(endpoint.status).toBe(201);
    const endpointId = endpoint.body.data.id as string;
    const secret = (await tenant.client.get(`${org}/webhook-endpoints/${endpointId}/secret`)).body
      .data.key as string;
    const receiver = run(command, args, { WEBHOOK_SECRET: secret, PORT: String(port) }, cwd);
    started.push(receiver.child);
    // Listening: a forged request is refused with 401.
    await pollUntil(
      async () => {
        try {
          const forged = await fetch(`http://127.0.0.1:${port}/hooks`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'webhook-id': 'msg_forged',
              'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
              'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
            },
            body: '{"forged":true}',
          });
          return forged.status === 401;
        } catch {
          return receiver.child.exitCode !== null;
        }
      },
      { timeoutMs: 60_000, description: `the ${name} receiver refusing a forged request` },
    );
    expect(receiver.child.exitCode).toBeNull();
    const published = await tenant.client.post('/v1/events', {
      eventType: 'order.created',
      payload: { id: 7, sample: name },
    });
    expect(published.status).toBe(202);
    await pollUntil(() => /verified msg_\S+/.test(receiver.output.text), {
      timeoutMs: 60_000,
      description: `the ${name} receiver verifying a real delivery`,
    });
    expect(receiver.output.text).toContain(name);
    const messages = await pollUntil(
      async () => {
        const log = await tenant.client.get(`${org}/messages?endpointId=${endpointId}`);
        return log.body.data[0]?.status === 'succeeded' ? log.body.data : null;
      },
      { timeoutMs: 30_000, description: `the ${name} delivery recorded as succeeded` },
    );
    expect(receiver.output.text).toContain(`verified ${messages[0].id}`);
    stop(receiver.child);
  }

  it('verifies a real delivery with the Node.js sample (standardwebhooks from npm)', async () => {
    const dir = join(WORK, 'node');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'receiver.mjs'), sample('quickstart.md', 'Node.js', 'js'));
    await checkReceiver('node', process.execPath, ['receiver.mjs'], dir);
  });

  it('verifies a real delivery with the Python sample (pip standardwebhooks in a venv)', async () => {
    const dir = join(WORK, 'python');
    mkdirSync(dir, { recursive: true });
    const python = join(dir, 'venv', 'bin', 'python');
    execFileSync('python3', ['-m', 'venv', join(dir, 'venv')], { stdio: 'ignore' });
    execFileSync(python, ['-m', 'pip', 'install', '-q', PYTHON_LIBRARY], { stdio: 'ignore' });
    writeFileSync(join(dir, 'receiver.py'), sample('quickstart.md', 'Python', 'python'));
    await checkReceiver('python', python, ['receiver.py'], dir);
  });

  it('verifies a real delivery with the Go sample (standard-webhooks from the module proxy)', async () => {
    const dir = join(WORK, 'go');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'go.mod'), 'module hookbase.local/docsample\n\ngo 1.22\n');
    writeFileSync(join(dir, 'main.go'), sample('quickstart.md', 'Go', 'go'));
    const env = { ...process.env, GOFLAGS: '-mod=mod' };
    execFileSync('go', ['get', GO_LIBRARY], { cwd: dir, env, stdio: 'ignore' });
    execFileSync('go', ['build', '-o', 'receiver', '.'], { cwd: dir, env, stdio: 'ignore' });
    await checkReceiver('go', join(dir, 'receiver'), [], dir);
  });

  it("verifies a real delivery with the receiving guide's function", async () => {
    const dir = join(WORK, 'receiving');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'verify.mjs'), sample('receiving.md', 'Verify every request', 'js'));
    writeFileSync(
      join(dir, 'receiver.mjs'),
      [
        "import { createServer } from 'node:http';",
        "import { verifyDelivery } from './verify.mjs';",
        'createServer((request, response) => {',
        '  let body = "";',
        "  request.on('data', (chunk) => (body += chunk));",
        "  request.on('end', () => {",
        '    try {',
        '      const payload = verifyDelivery(body, request.headers);',
        "      console.log(`verified ${request.headers['webhook-id']}`, JSON.stringify(payload));",
        '      response.writeHead(204).end();',
        '    } catch {',
        '      response.writeHead(401).end();',
        '    }',
        '  });',
        "}).listen(Number(process.env.PORT), '127.0.0.1');",
        '',
      ].join('\n'),
    );
    await checkReceiver('receiving', process.execPath, ['receiver.mjs'], dir);
  });
});
