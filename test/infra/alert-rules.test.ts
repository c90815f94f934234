import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The alert rules as Prometheus itself reads them: `promtool check config` (which loads the
// rules through infra/prometheus.yml's rule_files), `promtool check rules`, and the rules' unit
// tests (`promtool test rules`). Then what promtool does not know: every alert is tested firing
// and silent, and each one links a section of docs/OPERATIONS.md that exists.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RULES = 'infra/prometheus/alerts.yml';
const RULE_TESTS = 'infra/prometheus/alerts.test.yml';
const installed = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
if (!installed) throw new Error('promtool is not installed: run `sudo apt-get install -y prometheus` (CI does this in .ci/run)');

function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { cwd: ROOT, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const alertNames = () => [...read(RULES).matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]!);

/** The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to dashes. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

test('promtool accepts infra/prometheus.yml and the rules it loads', () => {
  const config = promtool('check', 'config', 'infra/prometheus.yml');
  expect(config).toMatchObject({ status: 0, output: expect.stringContaining(`SUCCESS: ${alertNames().length} rules found`) });
  const rules = promtool('check', 'rules', RULES);
  expect(rules).toMatchObject({ status: 0 });
});

test("the rules' unit tests pass (promtool test rules)", () => {
  const run = promtool('test', 'rules', RULE_TESTS);
  expect(run).toMatchObject({ status: 0, output: expect.stringContaining('SUCCESS') });
});

test('every alert is unit-tested firing and not firing', () => {
  // `alertname: X` then `exp_alerts: []` is a case where X must be silent; a list, firing
  const cases = [...read(RULE_TESTS).matchAll(/alertname: (\S+)\n\s+exp_alerts:( \[\])?/g)];
  const firing = new Set(cases.filter((c) => !c[2]).map((c) => c[1]));
  const silent = new Set(cases.filter((c) => c[2]).map((c) => c[1]));
  const names = alertNames();
  expect(names.length).toBeGreaterThanOrEqual(9);
  expect(names.filter((n) => !firing.has(n))).toEqual([]);
  expect(names.filter((n) => !silent.has(n))).toEqual([]);
});

test('every alert says what to do and links a section of docs/OPERATIONS.md that exists', () => {
  const anchors = new Set([...read('docs/OPERATIONS.md').matchAll(/^#{1,6} (.+)$/gm)].map((m) => headingAnchor(m[1]!)));
  const rules = read(RULES)
    .split(/^\s*- alert: /m)
    .slice(1);
  expect(rules.length).toBe(alertNames().length);
  for (const rule of rules) {
    const name = rule.split('\n')[0];
    const runbook = /\n\s+runbook_url: "docs\/OPERATIONS\.md#([\w-]+)"/.exec(rule)?.[1];
    const summary = /\n\s+summary: "(.+)"/.exec(rule)?.[1] ?? '';
    const description = /\n\s+description: "(.+)"/.exec(rule)?.[1] ?? '';
    expect({ name, runbook, known: runbook !== undefined && anchors.has(runbook) }).toEqual({ name, runbook: expect.any(String), known: true });
    // the summary names the same section, for receivers that show only the summary
    expect({ name, summaryLinks: summary.includes(`docs/OPERATIONS.md#${runbook}`), description: description.length > 40 }).toEqual({
      name,
      summaryLinks: true,
      description: true,
    });
  }
});
