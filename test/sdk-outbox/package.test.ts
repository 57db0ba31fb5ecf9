import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { pollUntil } from '@hookbase/testing';
import { createProducerDatabase } from './producer-database';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const SDK = join(ROOT, 'libs', 'sdk');

/**
 * The published package, used as a user's project uses it: `npm run sdk:build`, `npm pack`, the
 * tarball unpacked into a fresh project's node_modules next to its npm dependencies (linked from
 * this repository's, so the test needs no registry), nothing else of the repository. It loads,
 * writes an event in a pg transaction through `new Hookbase({ outbox: postgresOutbox() })`, its
 * `hookbase-outbox-relay` command sends that event, and its types compile in a TypeScript file.
 */
describe('@hookbase/sdk as a packed npm package', () => {
  let dir: string;
  let app: string;
  let producer: { url: string; drop: () => Promise<void> };
  let server: Server | undefined;
  let relay: ChildProcess | undefined;
  const received: { idempotencyKey?: string; eventType?: string }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hookbase-sdk-package-'));
    app = join(dir, 'app');
    await run(process.execPath, [join(ROOT, 'scripts', 'sdk-build.mjs')], { cwd: ROOT });
    const { stdout } = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', dir],
      { cwd: SDK },
    );
    const [{ filename }] = JSON.parse(stdout) as { filename: string }[];
    const installed = join(app, 'node_modules', '@hookbase', 'sdk');
    await mkdir(installed, { recursive: true });
    await run('tar', ['-xzf', join(dir, filename), '-C', installed, '--strip-components=1']);
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // The package's dependencies and what the user adds (pg, typeorm and the type packages).
    const linked = [
      ...Object.keys(manifest.dependencies),
      'pg',
      '@types/pg',
      '@types/node',
      'typeorm',
    ];
    for (const name of linked) {
      const target = join(app, 'node_modules', name);
      await mkdir(dirname(target), { recursive: true });
      await symlink(join(ROOT, 'node_modules', name), target, 'dir');
    }
    await writeFile(join(app, 'package.json'), '{ "name": "app", "private": true }\n');
    producer = await createProducerDatabase();
  }, 120_000);

  afterAll(async () => {
    relay?.kill('SIGKILL');
    server?.close();
    await producer?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('carries no workspace import: only npm packages and its own files', async () => {
    const offenders: string[] = [];
    const walk = async (folder: string): Promise<void> => {
      for (const entry of await readdir(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (/@hookbase\/(?!sdk)/.test(await readFile(path, 'utf8'))) offenders.push(path);
      }
    };
    await walk(join(app, 'node_modules', '@hookbase', 'sdk', 'dist'));
    expect(offenders).toEqual([]);
  });

  it('publishes inside a pg transaction, and its relay command delivers the event', async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        const event = JSON.parse(body) as { idempotencyKey?: string; eventType?: string };
        received.push(event);
        response.writeHead(202, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            data: {
              id: `evt_${received.length}`,
              eventType: event.eventType,
              acceptedAt: new Date().toISOString(),
              duplicate: false,
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const hookbaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    await writeFile(
      join(app, 'publish.js'),
      `const { Hookbase, postgresOutbox, OUTBOX_SCHEMA_SQL } = require('@hookbase/sdk');
const { Client } = require('pg');
(async () => {
  const db = new Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  await db.query(OUTBOX_SCHEMA_SQL);
  const hookbase = new Hookbase({ baseUrl: 'http://127.0.0.1:9', apiKey: 'hb_unused', outbox: postgresOutbox() });
  await db.query('BEGIN');
  await hookbase.publish({ eventType: 'package.rolled_back', payload: {} }, { transaction: db });
  await db.query('ROLLBACK');
  await db.query('BEGIN');
  const written = await hookbase.publish({ eventType: 'package.committed', payload: { n: 1 } }, { transaction: db });
  await db.query('COMMIT');
  await db.end();
  process.stdout.write(JSON.stringify(written));
})().catch((error) => { console.error(error); process.exit(1); });
`,
    );
    const env = { PATH: process.env.PATH ?? '', DATABASE_URL: producer.url };
    const { stdout } = await run(process.execPath, ['publish.js'], { cwd: app, env });
    const written = JSON.parse(stdout) as { id: string; idempotencyKey: string };
    expect(written.idempotencyKey).toBe(written.id);

    const manifest = JSON.parse(
      await readFile(join(app, 'node_modules', '@hookbase', 'sdk', 'package.json'), 'utf8'),
    ) as { bin: Record<string, string> };
    const bin = join(
      app,
      'node_modules',
      '@hookbase',
      'sdk',
      manifest.bin['hookbase-outbox-relay'],
    );
    // npm links and marks the bin executable on install; run the file itself with node here.
    relay = spawn(process.execPath, [bin], {
      cwd: app,
      env: {
        PATH: process.env.PATH ?? '',
        HOOKBASE_OUTBOX_DATABASE_URL: producer.url,
        HOOKBASE_URL: hookbaseUrl,
        HOOKBASE_API_KEY: 'hb_package_test',
        HOOKBASE_OUTBOX_IDLE_MS: '100',
      },
      stdio: 'ignore',
    });
    await pollUntil(() => received.length >= 1, {
      timeoutMs: 20_000,
      description: 'the relay command sending the committed event',
    });
    expect(received).toEqual([
      expect.objectContaining({ eventType: 'package.committed', idempotencyKey: written.id }),
    ]);
  }, 60_000);

  it('has type declarations a TypeScript project compiles against', async () => {
    await writeFile(
      join(app, 'typed.ts'),
      `import { Hookbase, postgresOutbox, OutboxRelay, HookbaseEventSender, type OutboxPublishResult } from '@hookbase/sdk';
import { Client } from 'pg';
export async function write(db: Client): Promise<OutboxPublishResult> {
  const hookbase = new Hookbase({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'hb_x', outbox: postgresOutbox() });
  const sender = new HookbaseEventSender(hookbase);
  new OutboxRelay({ database: 'postgres://localhost/app', sender, backoff: { baseMs: 1, maxMs: 2, growth: 'doubling' } });
  // @ts-expect-error the backoff's growth is a known word (a type of the carried domain rules)
  new OutboxRelay({ database: 'postgres://localhost/app', sender, backoff: { baseMs: 1, maxMs: 2, growth: 'sideways' } });
  // @ts-expect-error an event needs its type
  await hookbase.publish({ payload: {} }, { transaction: db });
  return hookbase.publish({ eventType: 'typed.event', payload: { n: 1 } }, { transaction: db });
}
`,
    );
    const compiled = run(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '--noEmit',
        '--strict',
        // Third-party declarations are not ours to check; ours resolve, or the expected errors
        // above (types that an unresolved import would turn into any) go missing and tsc fails.
        '--skipLibCheck',
        '--module',
        'commonjs',
        '--moduleResolution',
        'node',
        '--target',
        'es2022',
        '--types',
        'node',
        'typed.ts',
      ],
      { cwd: app },
    ).then(
      () => '',
      (error: { stdout?: string }) => error.stdout || String(error),
    );
    expect(await compiled).toBe('');
  }, 60_000);
});
