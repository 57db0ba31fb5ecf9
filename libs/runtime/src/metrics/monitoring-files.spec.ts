import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { HookbaseMetrics } from './hookbase-metrics';

const DEPLOY = join(__dirname, '..', '..', '..', '..', 'deploy');

/** Every metric name a query uses (Hookbase's and Node's process metrics). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b(?:hookbase|process|nodejs)_[a-z0-9_]+\b/g)].map((m) => m[0]);
}

/** What `/metrics` serves: the catalog's names, with a histogram's series suffixes. */
async function servedNames(): Promise<Set<string>> {
  const metrics = new HookbaseMetrics({ endpointLabels: false, processMetrics: true });
  const served = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    served.add(metric.name);
    if ((metric.type as unknown as string) === 'histogram') {
      for (const suffix of ['_bucket', '_count', '_sum']) served.add(`${metric.name}${suffix}`);
    }
  }
  return served;
}

interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: string };
  annotations: { summary: string; description?: string };
}

describe('deploy/prometheus alert rules', () => {
  const file = YAML.parse(
    readFileSync(join(DEPLOY, 'prometheus', 'hookbase-alerts.yaml'), 'utf8'),
  ) as { groups: { name: string; rules: AlertRule[] }[] };
  const rules = file.groups.flatMap((group) => group.rules);

  it('are well-formed rules: a name, an expression, a duration, a severity and a summary', () => {
    expect(rules.length).toBeGreaterThanOrEqual(5);
    const names = new Set<string>();
    for (const rule of rules) {
      expect(rule.alert).toMatch(/^Hookbase[A-Za-z]+$/);
      expect(names.has(rule.alert)).toBe(false);
      names.add(rule.alert);
      expect(typeof rule.expr).toBe('string');
      expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(['warning', 'critical']).toContain(rule.labels.severity);
      expect(rule.annotations.summary.length).toBeGreaterThan(0);
      expect(Object.keys(rule).sort()).toEqual(
        ['alert', 'annotations', 'expr', 'for', 'labels'].sort(),
      );
    }
  });

  it('query only metrics that /metrics serves', async () => {
    const served = await servedNames();
    for (const rule of rules) {
      const used = metricNames(rule.expr);
      expect(used.length).toBeGreaterThan(0);
      for (const name of used)
        expect({ rule: rule.alert, name, served: served.has(name) }).toEqual({
          rule: rule.alert,
          name,
          served: true,
        });
    }
  });
});

describe('deploy/grafana dashboard', () => {
  const dashboard = JSON.parse(
    readFileSync(join(DEPLOY, 'grafana', 'hookbase-dashboard.json'), 'utf8'),
  ) as { uid: string; panels: { title: string; targets: { expr: string }[] }[] };

  it('queries only metrics that /metrics serves, in every panel', async () => {
    const served = await servedNames();
    expect(dashboard.panels.length).toBeGreaterThan(0);
    for (const panel of dashboard.panels) {
      expect(panel.targets.length).toBeGreaterThan(0);
      for (const { expr } of panel.targets) {
        const used = metricNames(expr);
        expect(used.length).toBeGreaterThan(0);
        for (const name of used) {
          expect({ panel: panel.title, name, served: served.has(name) }).toEqual({
            panel: panel.title,
            name,
            served: true,
          });
        }
      }
    }
  });

  it('shows every hookbase_ metric of the catalog somewhere', async () => {
    const shown = new Set(
      dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricNames(t.expr))),
    );
    const catalog = new HookbaseMetrics({ endpointLabels: false, processMetrics: false });
    for (const metric of await catalog.registry.getMetricsAsJSON()) {
      const forms = [metric.name, `${metric.name}_bucket`, `${metric.name}_count`];
      expect({ metric: metric.name, shown: forms.some((f) => shown.has(f)) }).toEqual({
        metric: metric.name,
        shown: true,
      });
    }
  });
});
