import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';

const ROOT = join(__dirname, '..', '..');
const CHART = join(ROOT, 'deploy', 'helm', 'hookbase');
const ALL_OPTIONS = join(CHART, 'ci', 'all-options-values.yaml');
const COMPOSE = join(ROOT, 'docker-compose.yml');
const DOCKERFILE = join(ROOT, 'deploy', 'docker', 'Dockerfile');

/** Runs a command to its end: its exit code and what it printed (stdin and environment optional). */
function runTool(
  command: string,
  args: string[],
  input?: string,
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd: ROOT, timeout: 300_000, maxBuffer: 64 * 1024 * 1024, env: env ?? process.env },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(input ?? '');
  });
}

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  // Read as the Kubernetes objects they are: the shape is what the test checks.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
  data?: Record<string, string>;
}

const services = ['api', 'dispatcher', 'dlq-handler', 'fanout', 'ingest'];

/**
 * Prints the most V8's young generation ("new space", two semi-spaces) held while a loop
 * allocates, keeping a few of its objects alive for a while so that the young generation grows.
 */
const YOUNG_GENERATION_PROBE = `
const v8 = require('node:v8');
let most = 0;
const kept = [];
for (let i = 0; i < 2_000_000; i++) {
  const o = { i, text: 'x' + i, list: [i] };
  if (i % 10 === 0) kept.push(o);
  if (kept.length > 50_000) kept.splice(0, 25_000);
  if (i % 10_000 === 0) {
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    most = Math.max(most, space.space_size);
  }
}
console.log(JSON.stringify({ newSpaceMb: most / 1048576 }));
`;

/**
 * The Helm chart as CI sees it, offline: `helm lint` and `helm template` with the default values and
 * with every option on, every rendered manifest decoded strictly against the Kubernetes API types
 * (deploy/deploy-check, client-go's scheme), and the Compose file validated against the Compose
 * Specification and kept in step with the chart. helm and deploy-check are built from the Go
 * module proxy into .cache on first use (minutes), then reused.
 */
describe('deploy/helm/hookbase', () => {
  let helm: string;
  let deployCheck: string;
  let work: string;

  const template = async (...args: string[]) => {
    const rendered = await runTool(helm, ['template', 'hb', CHART, ...args]);
    expect({ code: rendered.code, stderr: rendered.stderr }).toEqual({ code: 0, stderr: '' });
    return rendered.stdout;
  };
  const manifests = (text: string): Manifest[] =>
    YAML.parseAllDocuments(text)
      .map((doc) => doc.toJSON() as Manifest | null)
      .filter((doc): doc is Manifest => doc !== null);
  const one = (all: Manifest[], kind: string, name: string): Manifest => {
    const found = all.find((m) => m.kind === kind && m.metadata.name === name);
    if (!found) throw new Error(`no ${kind} ${name} in ${all.map((m) => m.kind).join(', ')}`);
    return found;
  };

  beforeAll(async () => {
    const built = await runTool(process.execPath, [
      join(ROOT, 'scripts', 'lib', 'deploy-tools.mjs'),
      'paths',
    ]);
    if (built.code !== 0)
      throw new Error(`building helm and deploy-check failed:\n${built.stderr}`);
    ({ helm, deployCheck } = JSON.parse(built.stdout.trim().split('\n').pop()!) as {
      helm: string;
      deployCheck: string;
    });
    work = mkdtempSync(join(tmpdir(), 'hookbase-chart-'));
  }, 1_500_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each([
    ['the default values', []],
    ['every option on', ['-f', ALL_OPTIONS]],
  ])('lints, renders and decodes strictly with %s', async (_name, args) => {
    const lint = await runTool(helm, ['lint', '--strict', CHART, ...args]);
    expect({ code: lint.code, output: lint.stdout + lint.stderr }).toEqual({
      code: 0,
      output: expect.stringContaining('0 chart(s) failed'),
    });
    const rendered = await template(...args);
    const checked = await runTool(deployCheck, ['manifests'], rendered);
    expect({ code: checked.code, stderr: checked.stderr }).toEqual({ code: 0, stderr: '' });
    expect(checked.stdout).toMatch(/\d+ manifests decoded strictly/);
    // Every manifest rendered was decoded.
    expect(checked.stdout.match(/^ok /gm)).toHaveLength(manifests(rendered).length);
  });

  it('renders every resource the issue lists, with every option on', async () => {
    const all = manifests(await template('-f', ALL_OPTIONS));
    const kinds = (kind: string) =>
      all
        .filter((m) => m.kind === kind)
        .map((m) => m.metadata.name)
        .sort();
    expect(kinds('Deployment')).toEqual(services.map((s) => `hb-hookbase-${s}`));
    expect(kinds('Service')).toEqual(services.map((s) => `hb-hookbase-${s}`));
    expect(kinds('PodDisruptionBudget')).toEqual(services.map((s) => `hb-hookbase-${s}`));
    expect(kinds('HorizontalPodAutoscaler')).toEqual(['hb-hookbase-api', 'hb-hookbase-ingest']);
    expect(kinds('Ingress')).toEqual(['hb-hookbase']);
    expect(kinds('ServiceMonitor')).toEqual(['hb-hookbase']);
    expect(kinds('Secret')).toEqual(
      ['admin', 'credentials', 'database'].map((s) => `hb-hookbase-${s}`),
    );
    expect(kinds('ConfigMap')).toEqual(['hb-hookbase-settings']);
    expect(kinds('Job')).toEqual(['hb-hookbase-migrate']);

    const settings = one(all, 'ConfigMap', 'hb-hookbase-settings').data!;
    expect(settings).toMatchObject({
      HOOKBASE_RUN_MIGRATIONS: 'false',
      HOOKBASE_SHUTDOWN_DRAIN_MS: '40000',
      HOOKBASE_DELIVERIES_PARTITIONS: '24',
      HOOKBASE_KAFKA_REPLICATION_FACTOR: '3',
    });
    // The Job and what it reads exist before the release's other resources, on every upgrade too.
    for (const [kind, name, weight] of [
      ['ConfigMap', 'hb-hookbase-settings', '-10'],
      ['Secret', 'hb-hookbase-database', '-10'],
      ['Job', 'hb-hookbase-migrate', '-5'],
    ]) {
      expect(one(all, kind, name).metadata.annotations).toMatchObject({
        'helm.sh/hook': 'pre-install,pre-upgrade',
        'helm.sh/hook-weight': weight,
      });
    }
    const job = one(all, 'Job', 'hb-hookbase-migrate').spec.template.spec;
    expect(job.containers[0].command).toEqual(['node', 'dist/apps/migrate/src/main.js']);
    // With autoscaling the HPA owns the replica count.
    expect(one(all, 'Deployment', 'hb-hookbase-ingest').spec.replicas).toBeUndefined();
    expect(one(all, 'Deployment', 'hb-hookbase-dispatcher').spec.replicas).toBe(30);
  });

  it('runs every service non-root, read-only, unprivileged, probed and given time to drain', async () => {
    const all = manifests(await template());
    for (const service of services) {
      const pod = one(all, 'Deployment', `hb-hookbase-${service}`).spec.template.spec;
      const [container] = pod.containers;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        privileged: false,
        capabilities: { drop: ['ALL'] },
      });
      // 25 s of drain (HOOKBASE_SHUTDOWN_DRAIN_MS) and 10 s to close.
      expect(pod.terminationGracePeriodSeconds).toBe(35);
      expect(pod.affinity.podAntiAffinity).toBeDefined();
      expect(container.readinessProbe.httpGet.path).toBe('/health/ready');
      expect(container.livenessProbe.httpGet.path).toBe('/health/live');
      expect(container.resources.requests).toBeDefined();
    }
    expect(one(all, 'ConfigMap', 'hb-hookbase-settings').data).toMatchObject({
      HOOKBASE_SHUTDOWN_DRAIN_MS: '25000',
      HOOKBASE_RUN_MIGRATIONS: 'false',
    });
  });

  it('leaves Node.js its full young generation, and warns of a memory limit that does not', async () => {
    // At a memory limit of 512Mi or less Node.js gives a process semi-spaces of about 1 MB, where
    // a busy dispatcher spends most of its CPU collecting garbage; above it, 16 MB.
    const notes = async (...args: string[]) => {
      const installed = await runTool(helm, ['install', 'hb', CHART, '--dry-run=client', ...args]);
      expect({ code: installed.code, stderr: installed.stderr }).toEqual({ code: 0, stderr: '' });
      return installed.stdout.slice(installed.stdout.indexOf('NOTES:'));
    };
    const warning = /WARNING: with a memory limit of 512Mi or less[^]*?: (.*)\.\n/;
    for (const service of services) {
      const { resources } = one(manifests(await template()), 'Deployment', `hb-hookbase-${service}`)
        .spec.template.spec.containers[0];
      expect({ service, limit: resources.limits.memory }).toEqual({ service, limit: '1Gi' });
    }
    expect(await notes()).not.toMatch(/memory limit/);
    expect((await notes('--set', 'resources.limits.memory=512Mi')).match(warning)?.[1]).toBe(
      services.map((s) => `services.${s} (512Mi)`).join(', '),
    );
    // Each service's own limit counts, in any of Kubernetes' units; 513Mi is above the line.
    const some = await notes(
      ...['--set', 'services.dispatcher.resources.limits.memory=400M'],
      ...['--set', 'services.api.resources.limits.memory=0.5Gi'],
      ...['--set', 'services.fanout.resources.limits.memory=513Mi'],
    );
    expect(some.match(warning)?.[1]).toBe('services.api (0.5Gi), services.dispatcher (400M)');
    // Semi-spaces sized by NODE_OPTIONS answer it.
    expect(
      await notes(
        ...['--set', 'resources.limits.memory=512Mi'],
        ...['--set', 'env.NODE_OPTIONS=--max-semi-space-size=16'],
      ),
    ).not.toMatch(/memory limit/);
    // And the option the warning names works: the pinned Node.js takes it from NODE_OPTIONS (it
    // refuses one it does not allow there), and its young generation grows to two 16 MB halves.
    const probe = await runTool(process.execPath, ['-e', YOUNG_GENERATION_PROBE], undefined, {
      PATH: process.env.PATH,
      NODE_OPTIONS: '--max-semi-space-size=16',
    });
    expect({ code: probe.code, stderr: probe.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(probe.stdout)).toEqual({ newSpaceMb: 32 });
  });

  it('refuses a wrong value at install through values.schema.json', async () => {
    const cases: [string, RegExp][] = [
      ['services: { dispatcher: { replicas: three } }', /replicas/],
      ['kafka: { partitions: { deliveries: 0 } }', /deliveries/],
      ['shutdown: { drainSeconds: -1 }', /drainSeconds/],
      ['securityContext: { allowPrivilegeEscalation: true }', /allowPrivilegeEscalation/],
      ['services: { dispatcher: { replica: 3 } }', /replica/],
    ];
    for (const [values, problem] of cases) {
      const file = join(work, 'wrong.yaml');
      writeFileSync(file, values);
      const rendered = await runTool(helm, ['template', 'hb', CHART, '-f', file]);
      expect({ values, code: rendered.code }).toEqual({ values, code: 1 });
      expect(rendered.stderr).toMatch(/schema/);
      expect(rendered.stderr).toMatch(problem);
    }
  });

  it('says that dispatchers beyond the partition count get no work', async () => {
    const schema = readFileSync(join(CHART, 'values.schema.json'), 'utf8');
    expect(schema).toMatch(/replicas beyond kafka\.partitions\.deliveries get no work/);
    const notes = readFileSync(join(CHART, 'templates', 'NOTES.txt'), 'utf8');
    expect(notes).toMatch(/dispatcher replicas beyond/);
    expect(notes).toMatch(/port-forward svc\/.*-api/);
  });

  it('fails the strict decoding on an unknown field or a wrong type', async () => {
    const rendered = await template();
    const unknownField = rendered.replace(
      'terminationGracePeriodSeconds:',
      'terminationGracePeriod: 1\n      terminationGracePeriodSeconds:',
    );
    const wrongType = rendered.replace(/containerPort: 9464/, 'containerPort: "ops"');
    for (const broken of [unknownField, wrongType]) {
      expect(broken).not.toBe(rendered);
      const checked = await runTool(deployCheck, ['manifests'], broken);
      expect(checked.code).toBe(1);
      expect(checked.stderr).toMatch(/failed strict decoding/);
    }
  });

  describe('docker-compose.yml and the Dockerfile, in step with the chart', () => {
    const compose = YAML.parse(readFileSync(COMPOSE, 'utf8'), { merge: true }) as {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      services: Record<string, any>;
    };

    it('follows the Compose Specification, and a wrong key fails it', async () => {
      const checked = await runTool(deployCheck, ['compose', COMPOSE]);
      expect({ code: checked.code, stderr: checked.stderr }).toEqual({ code: 0, stderr: '' });
      const broken = join(work, 'docker-compose.yml');
      writeFileSync(
        broken,
        readFileSync(COMPOSE, 'utf8').replace('  restart: unless-stopped', '  restart_policy: 1'),
      );
      expect((await runTool(deployCheck, ['compose', broken])).code).toBe(1);
    });

    it('runs the same image, commands, settings and health checks as the chart', async () => {
      const all = manifests(await template());
      const settings = one(all, 'ConfigMap', 'hb-hookbase-settings').data!;
      for (const service of services) {
        const container = one(all, 'Deployment', `hb-hookbase-${service}`).spec.template.spec
          .containers[0];
        const composed = compose.services[service];
        expect({ service, image: composed.image }).toEqual({ service, image: container.image });
        expect({ service, command: composed.command }).toEqual({
          service,
          command: container.command,
        });
        const chartVariables = [
          ...Object.keys(settings),
          ...container.env.map((v: { name: string }) => v.name),
        ].sort();
        expect({ service, variables: Object.keys(composed.environment).sort() }).toEqual({
          service,
          variables: chartVariables,
        });
        // Same values for the settings both give (secrets and addresses differ by nature).
        for (const [name, value] of Object.entries(settings)) {
          if (name === 'KAFKA_BROKERS') continue;
          expect({ service, name, value: String(composed.environment[name]) }).toEqual({
            service,
            name,
            value,
          });
        }
        // The health check asks the readiness route the chart probes, on the port the chart probes.
        expect(composed.healthcheck.test.join(' ')).toContain(
          container.readinessProbe.httpGet.path,
        );
        const probedPort = container.ports.find(
          (p: { name: string }) => p.name === container.readinessProbe.httpGet.port,
        ).containerPort;
        if (container.readinessProbe.httpGet.port === 'ops') {
          expect(composed.environment.HOOKBASE_OPS_PORT).toBe(String(probedPort));
        }
        expect(composed.stop_grace_period).toBe(
          `${one(all, 'Deployment', `hb-hookbase-${service}`).spec.template.spec.terminationGracePeriodSeconds}s`,
        );
        expect(composed.read_only).toBe(true);
        expect(composed.cap_drop).toEqual(['ALL']);
      }
      const job = one(all, 'Job', 'hb-hookbase-migrate').spec.template.spec.containers[0];
      expect(compose.services.migrate.command).toEqual(job.command);
      expect(compose.services.ingest.depends_on.migrate).toEqual({
        condition: 'service_completed_successfully',
      });
    });

    it('builds on the pinned Node.js LTS release and runs as a non-root user', () => {
      const dockerfile = readFileSync(DOCKERFILE, 'utf8');
      const pinned = (
        JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
          devDependencies: Record<string, string>;
        }
      ).devDependencies.node;
      const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
      expect(bases).toEqual([`node:${pinned}-bookworm-slim`, `node:${pinned}-bookworm-slim`]);
      // Even majors are Node.js's LTS lines.
      expect(Number(pinned.split('.')[0]) % 2).toBe(0);
      const users = [...dockerfile.matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
      expect(users).toEqual(['node']);
      expect(dockerfile.lastIndexOf('USER node')).toBeGreaterThan(dockerfile.lastIndexOf('FROM '));
    });
  });
});
