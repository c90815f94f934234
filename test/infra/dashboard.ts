import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The Grafana dashboard as the infra tests read it: its panels' queries, and the metric names
// each query names.

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DASHBOARD = 'infra/grafana/dashboards/metronome.json';

export interface PanelQuery {
  panel: string;
  expr: string;
}

interface Panel {
  id: number;
  title: string;
  type: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { refId: string; expr: string; datasource?: { uid: string } }[];
}

export function dashboard(): { uid: string; title: string; panels: Panel[] } {
  return JSON.parse(readFileSync(path.join(ROOT, DASHBOARD), 'utf8'));
}

export function panelQueries(): PanelQuery[] {
  return dashboard().panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/**
 * A query as Prometheus' HTTP API takes it: Grafana's `$__rate_interval` (four scrape intervals
 * at least, Grafana computes it) becomes a fixed window.
 */
export function forPrometheus(expr: string, rateInterval: string): string {
  return expr.replaceAll('$__rate_interval', rateInterval);
}

// PromQL words that are not metric names when they stand alone: aggregations, their modifiers,
// the binary set operators and keywords.
const KEYWORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'offset',
  'bool',
  'inf',
  'nan',
]);

/** The metric names a PromQL expression selects (not its functions, labels or keywords). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // range windows
    .replace(/(?<![\w:])\d[\d.]*(?:e[+-]?\d+)?/gi, ' ') // numbers, 1e-9 included
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const names = new Set<string>();
  for (const m of bare.matchAll(/[A-Za-z_:][\w:]*/g)) {
    const word = m[0];
    const next = bare.slice(m.index! + word.length).trimStart();
    if (next.startsWith('(') || KEYWORDS.has(word.toLowerCase())) continue; // a function or keyword
    names.add(word);
  }
  return [...names];
}
