import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// docs/BENCHMARKS.md's table of current figures is rendered from bench/results/<scenario>.json
// (bench/table.mjs): the document never shows a figure that no recorded run measured, and a
// table edited by hand, or results recorded without rendering it, fail here.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const check = (cwd = ROOT) => spawnSync(process.execPath, ['bench/table.mjs', '--check'], { cwd, encoding: 'utf8' });

test('the table in docs/BENCHMARKS.md is the one the recorded results render', () => {
  const run = check();
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
});

test('a figure edited by hand in the table is found', async () => {
  const { renderTable, withTable } = (await import(path.join(ROOT, 'bench/table.mjs'))) as {
    renderTable(): string;
    withTable(doc: string, table: string): string;
  };
  const doc = readFileSync(path.join(ROOT, 'docs/BENCHMARKS.md'), 'utf8');
  const table = renderTable();
  const edited = table.replace(/\*\*[\d,.]+\*\*/, '**1**');
  expect(edited).not.toBe(table);
  expect(withTable(doc, edited)).not.toBe(doc);
  expect(withTable(withTable(doc, edited), table)).toBe(doc);
});

test('every recorded result is in bench/results/history.ndjson', async () => {
  const history = readFileSync(path.join(ROOT, 'bench/results/history.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { scenario: string; at: string });
  const { SCENARIOS } = (await import(path.join(ROOT, 'bench/table.mjs'))) as { SCENARIOS: [string, ...unknown[]][] };
  for (const [scenario] of SCENARIOS) {
    if (!existsSync(path.join(ROOT, `bench/results/${scenario}.json`))) continue;
    const latest = JSON.parse(readFileSync(path.join(ROOT, `bench/results/${scenario}.json`), 'utf8')) as { at: string };
    expect(history).toContainEqual(expect.objectContaining({ scenario, at: latest.at }));
  }
});
