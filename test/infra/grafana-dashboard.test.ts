import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dashboard, metricNames, panelQueries, ROOT } from './dashboard.js';

// The dashboard file itself, without a stack: it is what Grafana provisions, every panel queries
// the provisioned data source, and every metric it names is one the services declare. Whether
// the services really export them, and whether the queries run, is test/infra/prometheus.test.ts.

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

test('the name extraction finds metrics, never functions, labels or keywords', () => {
  expect(metricNames('histogram_quantile(0.99, sum by (le) (rate(metronome_run_start_lag_seconds_bucket[$__rate_interval])))')).toEqual([
    'metronome_run_start_lag_seconds_bucket',
  ]);
  expect(metricNames('sum(rate(a_total{result=~"sent|failed"}[5m])) / clamp_min(sum(rate(b_total[5m])), 1e-9) > 0.05')).toEqual(['a_total', 'b_total']);
  expect(metricNames('(sum(up{job="scheduler"}) > 0) unless on() (sum(increase(c_count[2m])) > 0)')).toEqual(['up', 'c_count']);
  expect(metricNames('max by (status) (metronome_runs) and ignoring(x) other')).toEqual(['metronome_runs', 'other']);
});

test('every panel queries the provisioned Prometheus data source, laid out without overlap', () => {
  const uid = /\n\s+uid: (\S+)/.exec(read('infra/grafana/provisioning/datasources/prometheus.yml'))?.[1];
  expect(uid).toBe('prometheus');
  const { uid: dashboardUid, panels } = dashboard();
  expect(dashboardUid).toBe('metronome');
  expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
  const taken = new Set<string>();
  for (const p of panels) {
    expect({ panel: p.title, datasource: p.datasource?.uid, targets: (p.targets?.length ?? 0) > 0 }).toEqual({
      panel: p.title,
      datasource: uid,
      targets: true,
    });
    for (const t of p.targets ?? []) expect({ panel: p.title, datasource: t.datasource?.uid }).toEqual({ panel: p.title, datasource: uid });
    for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
      for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
        expect({ panel: p.title, cell: `${x},${y}`, free: !taken.has(`${x},${y}`) }).toEqual({ panel: p.title, cell: `${x},${y}`, free: true });
        taken.add(`${x},${y}`);
      }
    }
  }
  // the provider loads the folder compose mounts the dashboards at
  expect(read('infra/grafana/provisioning/dashboards/metronome.yml')).toContain('path: /var/lib/grafana/dashboards');
});

test('the panels cover what operators watch', () => {
  const titles = dashboard()
    .panels.map((p) => p.title.toLowerCase())
    .join('\n');
  for (const topic of [
    'runs by status',
    'start lag',
    'sends by result and platform',
    'provider waits by scope',
    'outcomes',
    'queue depth',
    'due runs not started',
    'accounts',
    'cpu by service',
    'round trips',
  ]) {
    expect({ topic, shown: titles.includes(topic) }).toEqual({ topic, shown: true });
  }
});

test('every metric a panel names is declared by the services (or is Prometheus’ own `up`)', () => {
  const declared = new Set([...read('libs/observability/src/metrics.ts').matchAll(/name: '(metronome_\w+)'/g)].map((m) => m[1]!));
  const known = (name: string) => name === 'up' || name.startsWith('process_') || declared.has(name) || declared.has(name.replace(/_(bucket|count|sum)$/, ''));
  const unknown = panelQueries().flatMap(({ panel, expr }) =>
    metricNames(expr)
      .filter((n) => !known(n))
      .map((name) => ({ panel, name })),
  );
  expect(unknown).toEqual([]);
});
