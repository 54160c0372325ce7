import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { METRICS } from '../../libs/telemetry/src/metric-table.js';
import { REPO_ROOT } from './support/helm.js';

/*
 * The alert file the chart and docker-compose ship (helm/sluice/files/prometheus-alerts.yaml),
 * checked by Debian's promtool (package prometheus; .ci/run installs it) and against the code:
 * every metric it reads exists, every alert has a promtool case that fires it and a runbook entry.
 */

const ALERTS = 'helm/sluice/files/prometheus-alerts.yaml';
const CASES = 'test/deploy/prometheus-alerts.promtool.yaml';

interface Rule {
  alert: string;
  expr: string;
  annotations: { runbook: string };
}
const rules = (parseYaml(readFileSync(join(REPO_ROOT, ALERTS), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

const promtool = async (args: string[]) => {
  const { stdout } = await promisify(execFile)('promtool', args, { cwd: REPO_ROOT, timeout: 30_000 });
  return stdout;
};

describe('the shipped Prometheus alerts', () => {
  it('pass promtool check rules', async () => {
    expect(await promtool(['check', 'rules', ALERTS])).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('pass their promtool unit tests: each fires on what it is about, none on healthy series', async () => {
    expect(await promtool(['test', 'rules', CASES])).toContain('SUCCESS');
  });

  it('every alert has a case that fires it', () => {
    const cases = parseYaml(readFileSync(join(REPO_ROOT, CASES), 'utf8')) as { tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[] };
    const fired = new Set(cases.tests.flatMap((t) => t.alert_rule_test.filter((a) => (a.exp_alerts ?? []).length > 0).map((a) => a.alertname)));
    expect(rules.map((r) => r.alert).filter((name) => !fired.has(name))).toEqual([]);
  });

  it('read only metrics the processes export', () => {
    const exported = new Set(
      Object.values(METRICS).flatMap((m) => (m.type === 'histogram' ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name])),
    );
    const read = rules.flatMap((r) => r.expr.match(/\bsluice_[a-z_]+/g) ?? []);
    expect(read.length).toBeGreaterThan(rules.length - 1);
    expect(read.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('each link to its own entry in docs/operations.md', () => {
    const operations = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const anchors = new Set(
      [...operations.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
        (m[1] ?? '')
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const rule of rules) {
      expect(rule.annotations.runbook).toBe(`docs/operations.md#${rule.alert.toLowerCase()}`);
      expect(anchors, rule.alert).toContain(rule.alert.toLowerCase());
    }
  });
});
