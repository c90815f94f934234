// `npm run bench`: benchmarks against the real stack (processes, PostgreSQL, Redis, sandbox).
// Writes bench/results/<name>.json, appends it to bench/results/history.ndjson, prints a table,
// and renders the figures table of docs/BENCHMARKS.md (bench/table.mjs). Pick some with `npm run bench -- pacing`.
// `--quick` runs smaller sizes (a smoke run; the figures in docs/BENCHMARKS.md are full runs).
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pipelineThroughput } from './scenarios/throughput.mjs';
import { throughputReceipts } from './scenarios/throughput-receipts.mjs';
import { pacingEfficiency } from './scenarios/pacing.mjs';
import { startLag } from './scenarios/start-lag.mjs';
import { firstStart } from './scenarios/first-start.mjs';
import { intervalDrift } from './scenarios/interval-drift.mjs';
import { scheduling } from './scenarios/scheduling.mjs';
import { queueCeiling } from './scenarios/queue-ceiling.mjs';
import { sendCost } from './scenarios/cost.mjs';
import { costSmallRuns } from './scenarios/cost-small-runs.mjs';
import { fairness } from './scenarios/fairness.mjs';
import { apiLoad } from './scenarios/api-load.mjs';
import { bigRun } from './scenarios/big-run.mjs';
import { audienceImport, audienceRun } from './scenarios/audiences.mjs';
import { directorySearch } from './scenarios/directory-search.mjs';
import { history } from './scenarios/history.mjs';
import { historySweep } from './scenarios/history-sweep.mjs';
import { historySize } from './scenarios/history-size.mjs';
import { accountsCapacity } from './scenarios/accounts-capacity.mjs';
import { renderTable, withTable } from './table.mjs';

const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const wanted = args.filter((a) => !a.startsWith('--'));
const env = {
  databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  quick,
};

const scenarios = [
  { name: 'queue-ceiling', run: queueCeiling },
  { name: 'throughput', run: pipelineThroughput },
  { name: 'throughput-receipts', run: throughputReceipts },
  { name: 'pacing', run: pacingEfficiency },
  { name: 'start-lag', run: startLag },
  { name: 'start-lag-10k', run: (env) => startLag(env, 10_000) },
  { name: 'start-lag-n', run: (env) => startLag(env, Number(process.env.BENCH_CAMPAIGNS ?? 1000)) },
  { name: 'first-start', run: firstStart },
  { name: 'interval-drift', run: intervalDrift },
  { name: 'scheduling', run: scheduling },
  { name: 'cost', run: sendCost },
  { name: 'cost-small-runs', run: costSmallRuns },
  { name: 'fairness', run: fairness },
  { name: 'big-run', run: bigRun },
  { name: 'api-load', run: apiLoad },
  { name: 'audience-import', run: audienceImport },
  { name: 'audience-run', run: audienceRun },
  { name: 'directory-search', run: directorySearch },
  { name: 'history', run: history },
  { name: 'history-sweep', run: historySweep },
  { name: 'history-size', run: historySize },
  { name: 'accounts-capacity', run: accountsCapacity },
];

mkdirSync(RESULTS, { recursive: true });
const rows = [];
for (const s of scenarios) {
  if (wanted.length && !wanted.includes(s.name)) continue;
  process.stdout.write(`… ${s.name}${quick ? ' (quick)' : ''}\n`);
  const started = Date.now();
  const loadBefore = loadavg()[0];
  const result = await s.run(env);
  const load1 = { before: +loadBefore.toFixed(2), after: +loadavg()[0].toFixed(2) };
  const record = {
    scenario: s.name,
    quick,
    at: new Date().toISOString(),
    node: process.version,
    cpus: (await import('node:os')).cpus().length,
    load1,
    seconds: (Date.now() - started) / 1000,
    ...result,
  };
  writeFileSync(path.join(RESULTS, `${s.name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  appendFileSync(path.join(RESULTS, 'history.ndjson'), `${JSON.stringify(record)}\n`);
  for (const [metric, value] of Object.entries(result.figures)) rows.push({ scenario: s.name, metric, value });
}
const width = Math.max(...rows.map((r) => r.metric.length), 6);
console.log(`\n${'scenario'.padEnd(14)} ${'metric'.padEnd(width)} value`);
for (const r of rows) console.log(`${r.scenario.padEnd(14)} ${r.metric.padEnd(width)} ${typeof r.value === 'number' ? +r.value.toFixed(3) : r.value}`);
const doc = path.join(RESULTS, '../../docs/BENCHMARKS.md');
writeFileSync(doc, withTable(readFileSync(doc, 'utf8'), renderTable()));
console.log(`\nresults: ${path.relative(process.cwd(), RESULTS)}/*.json; the table in docs/BENCHMARKS.md is rendered from them`);
process.exit(0);
