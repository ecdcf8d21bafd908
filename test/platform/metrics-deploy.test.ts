// What deploy/ ships for Prometheus and Grafana: the alert rules pass `promtool check rules` and
// their own unit tests (`promtool test rules`), the scrape configuration `promtool check config`,
// and every metric the rules and the dashboard name is one the server serves.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sql } from '../../server/src/db.ts';
import { registerDatabaseGauges } from '../../server/src/executor/gauges.ts';
import { collectProcessMetrics, registry } from '../../server/src/metrics.ts';

const root = path.resolve(import.meta.dirname, '../..');
const prometheusDir = path.join(root, 'deploy/prometheus');
const promtool = spawnSync('promtool', ['--version']).status === 0;
if (!promtool) console.warn("promtool is not installed (Debian's `prometheus` package): the rules are not checked here");

function promtoolSays(args: string[]): string {
  return execFileSync('promtool', args, { cwd: prometheusDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The metrics this server serves, by the names a query uses (a histogram's series included). */
function servedNames(): Set<string> {
  collectProcessMetrics();
  registerDatabaseGauges(null as unknown as Sql, { warn: () => undefined } as never, 30_000);
  const names = new Set<string>();
  for (const metric of registry.getMetricsAsArray()) {
    names.add(metric.name);
    for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
  }
  return names;
}

function namedIn(text: string): string[] {
  return [...new Set(text.match(/\b(?:proctor|nodejs|process)_[a-z0-9_]+\b/g) ?? [])];
}

describe('the Prometheus and Grafana files of deploy/', () => {
  it.skipIf(!promtool)('when promtool checks the alert rules and runs their tests, then both pass', () => {
    expect(promtoolSays(['check', 'rules', 'proctor-rules.yml'])).toContain('SUCCESS: 8 rules found');
    expect(promtoolSays(['test', 'rules', 'proctor-rules.test.yml'])).toContain('SUCCESS');
    expect(promtoolSays(['check', 'config', 'prometheus.yml'])).toContain('SUCCESS');
  });

  it('when the rules and the dashboard name a metric, then the server serves it', () => {
    const served = servedNames();
    const rules = fs.readFileSync(path.join(prometheusDir, 'proctor-rules.yml'), 'utf8');
    const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'deploy/grafana/proctor.json'), 'utf8')) as {
      panels: { targets?: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)).join('\n');
    const named = [...namedIn(rules), ...namedIn(exprs)];
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((name) => !served.has(name))).toEqual([]);
  });
});
