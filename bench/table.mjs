// The table of current figures in docs/BENCHMARKS.md, rendered from bench/results/<scenario>.json
// (the last full run of each scenario, as `npm run bench` wrote it), so the table never says
// what no run measured. `node bench/table.mjs` prints it, `--write` puts it into the document
// between its markers, `--check` exits 1 when the document's table differs (a test runs it).
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = path.join(ROOT, 'bench/results');
const DOC = path.join(ROOT, 'docs/BENCHMARKS.md');
const START = '<!-- figures:start (node bench/table.mjs --write) -->';
const END = '<!-- figures:end -->';

/** Per scenario: what it measures, the figures shown (label → key in `figures`), and its goal. */
export const SCENARIOS = [
  [
    'queue-ceiling',
    'BullMQ no-op jobs, one worker at concurrency 50, same Redis: the ceiling the sending figures are compared with',
    { 'jobs/s': 'no-op jobs/s', 'cold pass': 'no-op jobs/s, cold pass' },
    'a ceiling, no goal',
  ],
  [
    'throughput',
    '200 accounts × 50 chats, pace unbounded, zero-latency sandbox, 2 senders × 32 jobs, after a cold phase on the same stack: sends/s end to end, each result durable',
    {
      'sends/s': 'sends/s',
      'sender CPU ms/send': 'sender CPU ms/send',
      'first pass sends/s': 'first pass sends/s',
      'cold phase sends/s': 'cold phase sends/s',
      duplicates: 'duplicate deliveries',
    },
    '≥ 2,000 sends/s, ≤ 0.5 ms CPU per send, ≥ 0.12 of the ceiling, 0 duplicates',
  ],
  [
    'throughput-receipts',
    'the throughput scenario in alternating turns with the sandbox’s receipts off and on, after a discarded warm-up turn (on: every message delivered at once, half read a second later, posted to the API while the senders send, every account’s receipts of 20 ms in one POST); CPU per receipt: a turn with receipts less one without',
    {
      'off sends/s': 'sends/s, receipts off',
      'on sends/s': 'sends/s, on',
      'on / off': 'on / off',
      duplicates: 'duplicate deliveries',
      'receipts/POST': 'receipts per POST, on',
      'API CPU ms/receipt': 'API CPU ms/receipt, on',
      'PostgreSQL ms/receipt': 'PostgreSQL CPU ms/receipt, on',
      'sandbox ms/receipt': 'sandbox CPU ms/receipt, on',
    },
    'on / off ≥ 0.9',
  ],
  [
    'pacing',
    '1,000 chats on one account at 600/min, burst 1, 2 senders: completion over the ideal, judged at the sandbox',
    {
      ratio: 'ratio (goal ≤ 1.02)',
      'most in any 10 s (limit 101)': 'most sends in any 10 s (limit 101)',
      'most in any 1 s (limit 11)': 'most sends in any 1 s (limit 11)',
    },
    'ratio ≤ 1.02, never above a limit',
  ],
  [
    'start-lag',
    '1,000 interval campaigns (60 s, 5 chats, own accounts, sandbox 20 ms), 2 senders, 3 min: run start minus `scheduledAt`',
    { 'p50 s': 'lag p50 s', 'p99 s': 'lag p99 s', 'max s': 'lag max s', runs: 'runs started', early: 'early starts' },
    'p99 ≤ 1 s, 0 early',
  ],
  [
    'start-lag-10k',
    'the same at 10,000 interval campaigns (167 runs and 833 sends a second)',
    { 'p50 s': 'lag p50 s', 'p99 s': 'lag p99 s', 'max s': 'lag max s', runs: 'runs started', early: 'early starts' },
    'p99 ≤ 0.1 s, 0 early',
  ],
  [
    'first-start',
    '1,000 interval campaigns (30 s, 3 chats) created as fast as the API takes them, 2 senders, after a cold phase of 1,000: first and later runs, start minus `scheduledAt`',
    {
      'first p99 s': 'first lag p99 s',
      'later p99 s': 'later lag p99 s',
      'cold first p99 s': 'cold phase: first lag p99 s',
      early: 'early starts',
      'before scheduledAt (sandbox)': 'messages received before scheduledAt (sandbox)',
    },
    'p99 ≤ 0.25 s, 0 early',
  ],
  [
    'interval-drift',
    '50 campaigns every 10 s, 5 chats, 600/min, 2 senders, 3 min: each chat’s spacing minus the interval, judged at the sandbox',
    {
      'drift p50 ms': 'chat spacing minus everySeconds p50 ms (drift per occurrence)',
      'min ms (never < 0)': 'chat spacing minus everySeconds min ms (never < 0)',
      'first message p99 s, last occurrence': 'first message after scheduledAt p99 s, last occurrence',
    },
    'never below 0',
  ],
  [
    'scheduling',
    'start lag of 1,000 interval campaigns with 1, 2 and 4 senders (3 min each), judged at the sandbox too',
    {
      '1 sender p99 s': '1s start lag p99 s',
      '2 senders p99 s': '2s start lag p99 s',
      '4 senders p99 s': '4s start lag p99 s',
      'chats served early': '4s chats served early',
      'scheduler statements per run': '2s scheduler statements per run',
    },
    'p99 ≤ 1 s with any sender count, 0 early',
  ],
  [
    'cost',
    '50 accounts × 50 chats, one part, pace unbounded, 2 senders: per delivered part, counted by the senders',
    {
      'PostgreSQL statements': 'pg statements/send',
      'Redis commands': 'redis commands/send (locks, pace, enqueue)',
      'BullMQ worker commands': 'redis commands/send (BullMQ worker)',
    },
    '≤ 1 statement per send',
  ],
  [
    'cost-small-runs',
    'the start-lag runs (5 chats, own accounts, 600/min, sandbox 20 ms, 2 senders), 600 due over 6 s: per run, counted by the senders',
    {
      'sender CPU ms': 'sender CPU ms/run',
      'PostgreSQL statements': 'pg statements/run',
      'Redis commands': 'redis commands/run (locks, pace, enqueue)',
      'BullMQ worker commands': 'redis commands/run (BullMQ worker)',
      jobs: 'jobs/run',
    },
    'no goal: what a start-lag run costs the senders',
  ],
  [
    'fairness',
    '1 account × 5,000 chats and 100 accounts × 5 chats due at once, 1 sender, after a cold phase: start lag of the 100 small runs',
    { 'p99 s': 'small runs start lag p99 s', 'cold p99 s': 'cold phase: small runs start lag p99 s', 'big run sent meanwhile': 'big run sent when small done' },
    'p99 ≤ 0.5 s',
  ],
  [
    'big-run',
    '1 account × 10,000 chats, pace unbounded, zero-latency sandbox, 2 senders: sends/s at the sandbox',
    { 'sends/s': 'sends/s', 'first fifth': 'sends/s, first fifth', 'last fifth': 'sends/s, last fifth' },
    'as fast at its start as at its end',
  ],
  [
    'api-load',
    '`GET /v1/runs/{id}` and resume against 40,000 paused runs, 1–100 connections',
    { 'GET c=10 req/s': 'GET run c=10 req/s', 'GET c=10 p99 ms': 'GET run c=10 p99 ms', 'resume c=10 p99 ms': 'resume c=10 p99 ms' },
    'no goal set',
  ],
  [
    'audience-import',
    'a 100,000-row CSV imported through `POST /v1/audiences/{id}/members`, request to answer',
    { 'import s': 'import 100000 rows s', 're-import s': 're-import (all updates) s', 'dry run s': 'dry run s' },
    '≤ 10 s',
  ],
  [
    'audience-run',
    'a 10,000-member audience run and a 10-chat inline run due together: first message minus `scheduledAt`',
    { 'audience p50 s': 'audience run: first send − scheduledAt p50 s', 'inline p50 s': 'inline run: first send − scheduledAt p50 s' },
    'the audience run as soon as the inline one',
  ],
  [
    'directory-search',
    '`GET /v1/accounts/{id}/chats?query=` over 10,000 synced chats at 50 requests/s evenly spaced, 20 s',
    { 'p50 ms': 'search p50 ms', 'p99 ms': 'search p99 ms', 'within 50 ms (API)': 'search served within 50 ms (API histogram)' },
    'p99 ≤ 50 ms',
  ],
  [
    'history',
    'the same stack in turns on an empty database (but for one page of each list: 510 runs of the history tenant) and on one holding a long history (1,000,000 finished runs of 20 chats over 400 days by default; `BENCH_HISTORY_RUNS`; retention past the history, so no sweep runs): sending (a pass of 400 accounts × 50 chats, `BENCH_HISTORY_ACCOUNTS`), every run list and page, the scheduler tick',
    {
      runs: 'history runs',
      'sends/s ratio': 'sends/s ratio (goal ≥ 0.9)',
      'worst list p99 ratio': 'worst list p99 ratio (goal ≤ 2)',
      'worst list p99 ms': 'worst list p99 ms with history (goal ≤ 50)',
      'worst list p50 ratio': 'worst list p50 ratio',
      'worst list p50 ms': 'worst list p50 ms with history',
      'tick ms empty': 'scheduler tick mean ms empty',
      'tick ms with history': 'scheduler tick mean ms with history',
      'bytes per target': 'run_targets bytes per row',
    },
    'sends ≥ 0.9 of empty; lists p99 ≤ 2× empty and ≤ 50 ms; tick unchanged',
  ],
  [
    'history-sweep',
    "the throughput pass on clones of the history scenario's filled database, in turns alone (retention past the history) and beside the scheduler's retention sweep (the default 90 days: three quarters of the history due); lock waits read from PostgreSQL (`pg_locks` every 10 ms, `log_lock_waits` past 100 ms)",
    {
      runs: 'history runs',
      'sends/s ratio': 'sends/s ratio (goal ≥ 0.9)',
      'swept rows/s': 'sweep rows/s during the measured pass',
      'longest lock wait of a sender statement ms': 'longest lock wait of a sender statement ms, beside the sweep (goal ≤ 100)',
      'alone ms': 'longest lock wait of a sender statement ms, alone',
      'on rows or tables ms': 'longest lock wait of a sender statement on rows or tables ms, beside the sweep',
      'waits past 100 ms logged': 'waits past 100 ms PostgreSQL logged, beside the sweep',
    },
    'sends ≥ 0.9 of alone; no send waits on a lock more than 100 ms',
  ],
  [
    'history-size',
    "a clone of the history scenario's filled database compacted (`VACUUM FULL`, the bytes per row the prediction takes), swept at once by the scheduler's sweep at the default retention (90 days of chats and events, 400 of run summaries), compacted again: the history tables against docs/OPERATIONS.md's size formula",
    {
      runs: 'history runs',
      'MB as written': 'history tables MB as written',
      'MB after sweep and VACUUM FULL': 'history tables MB after VACUUM FULL',
      'predicted MB': 'predicted MB (the formula, bytes per row measured before the sweep)',
      'measured / predicted': 'measured / predicted (goal within 0.9–1.1)',
      'measured / docs': 'measured / docs/OPERATIONS.md',
      'sweep rows/s': 'sweep rows/s (all at once, nothing else running)',
    },
    'within 10 % of the formula',
  ],
  [
    'accounts-capacity',
    'WhatsApp accounts moved in by session import, always connected over 2 senders (real Baileys; @openclaw/crabline’s server in its own process behind a relay counting sockets, its file recorder and Signal-store caps lifted; 25 connects/s; job slots as by default: 128 and one per account held); idle, then every account sending 20 a minute to 30 chats (the server’s accepted messages), kill -9 during the sends, a rolling restart (SIGTERM, start again, then the other), a 3rd and a 4th sender',
    {
      '500: connected s': '500 accounts: connected after the senders start s',
      '500: idle RSS MB per account': '500 accounts: idle: RSS per held account MB',
      '500: idle CPU % of a core per 1,000': '500 accounts: idle: CPU per 1,000 accounts % of a core',
      '500: sending msgs/s (asked 167)': '500 accounts: sending: messages accepted at the server a second',
      '500: sending RSS MB per account': '500 accounts: sending: RSS per held account MB',
      '500: kill -9 → its accounts sending again s': '500 accounts: kill -9 of the sender holding *: all its accounts sending again s',
      '500: kill -9 → sockets moved s (10/50/90/100 %)': '500 accounts: kill -9: 10 / 50 / 90 / 100 % of its accounts connected on the other s',
      '500: kill -9 → sending again s (10/50/90 %)': '500 accounts: kill -9: 10 / 50 / 90 % of its accounts sending again s',
      '500: kill -9 → socket moved to sending s (10/50/90/100 %)': '500 accounts: kill -9: 10 / 50 / 90 / 100 % of its accounts from socket moved to sending s',
      '500: restarted sender’s share s': '500 accounts: kill -9: the restarted sender has its share (±20 %) s',
      '500: rolling restart step 1 s (from its SIGTERM to the last account’s first message after the exit)':
        '500 accounts: rolling restart step 1: its * accounts sending again after its exit, from its SIGTERM s',
      '500: step 2 s': '500 accounts: rolling restart step 2: its * accounts sending again after its exit, from its SIGTERM s',
      '500: step 1 sockets opened at the server (for its accounts)':
        '500 accounts: rolling restart step 1: sockets opened at the server until even, for its accounts',
      '500: duplicates': '500 accounts: messages accepted twice (duplicates)',
      '500: unknown': '500 accounts: unknown targets',
      '500: 4th sender even s': '500 accounts: 4 senders: within ±20 % of even after the 4th starts s',
      '1,000: connected s': '1000 accounts: connected after the senders start s',
      '1,000: idle RSS MB per account': '1000 accounts: idle: RSS per held account MB',
      '1,000: idle CPU % of a core per 1,000': '1000 accounts: idle: CPU per 1,000 accounts % of a core',
      '1,000: sending msgs/s (asked 333)': '1000 accounts: sending: messages accepted at the server a second',
      '1,000: sending RSS MB per account': '1000 accounts: sending: RSS per held account MB',
      '1,000: sending CPU per 1,000 % of a core': '1000 accounts: sending: CPU per 1,000 accounts % of a core',
      '1,000: sending CPU beside the senders % of a core': '1000 accounts: sending: CPU beside the senders % of a core',
      '1,000: sending longest event-loop delay ms': '1000 accounts: sending: longest event-loop delay per sender ms',
      '1,000: kill -9 → its accounts sending again s': '1000 accounts: kill -9 of the sender holding *: all its accounts sending again s',
      '1,000: kill -9 → socket moved to sending s (10/50/90/100 %)':
        '1000 accounts: kill -9: 10 / 50 / 90 / 100 % of its accounts from socket moved to sending s',
      '1,000: restarted sender’s share s': '1000 accounts: kill -9: the restarted sender has its share (±20 %) s',
      '1,000: rolling restart step 1 s (from its SIGTERM to the last account’s first message after the exit)':
        '1000 accounts: rolling restart step 1: its * accounts sending again after its exit, from its SIGTERM s',
      '1,000: step 2 s': '1000 accounts: rolling restart step 2: its * accounts sending again after its exit, from its SIGTERM s',
      '1,000: step 1 sockets opened at the server (for its accounts)':
        '1000 accounts: rolling restart step 1: sockets opened at the server until even, for its accounts',
      '1,000: most sockets at the server': '1000 accounts: most sockets open at the server at once, spread included',
      '1,000: duplicates': '1000 accounts: messages accepted twice (duplicates)',
      '1,000: unknown': '1000 accounts: unknown targets',
      '1,000: 3 senders even s': '1000 accounts: 3 senders: within ±20 % of even after the 3rd starts s',
      '1,000: 4th sender even s': '1000 accounts: 4 senders: within ±20 % of even after the 4th starts s',
    },
    '≤ 4 MB RSS per account, idle CPU ≤ 20 % of a core per 1,000; kill -9 and each restart step → sending again ≤ 60 s; 0 duplicates; spread ±20 %, a 4th sender’s share ≤ 120 s',
  ],
];

const number = (v) => (typeof v !== 'number' ? String(v) : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : String(+v.toFixed(3)));

/** A figure by its key, where `*` stands for any text (a count the run decides, as in "the sender holding *"). */
function figureOf(figures, key) {
  const pattern = new RegExp(
    `^${key
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  const found = Object.keys(figures).find((k) => pattern.test(k));
  return found === undefined ? '–' : number(figures[found]);
}

/** The markdown table from the results on disk. */
export function renderTable() {
  const rows = ['| scenario | what | figures | goal | measured |', '| --- | --- | --- | --- | --- |'];
  for (const [name, what, shown, goal] of SCENARIOS) {
    const file = path.join(RESULTS, `${name}.json`);
    if (!existsSync(file)) {
      rows.push(`| ${name} | ${what} | not measured yet | ${goal} | \`npm run bench -- ${name}\` |`);
      continue;
    }
    const r = JSON.parse(readFileSync(file, 'utf8'));
    const figures = Object.entries(shown).map(([label, key]) => `${label} **${figureOf(r.figures, key)}**`);
    rows.push(
      `| ${name} | ${what} | ${figures.join(' · ')} | ${goal} | \`npm run bench -- ${name}\`${r.quick ? ' --quick' : ''}, ${r.at.slice(0, 16).replace('T', ' ')} UTC${r.load1 ? `, load ${r.load1.before} → ${r.load1.after}` : ''} |`,
    );
  }
  return rows.join('\n');
}

/** The document with its table replaced. */
export function withTable(doc, table) {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/BENCHMARKS.md has no ${START} … ${END} markers`);
  return `${doc.slice(0, a + START.length)}\n${table}\n${doc.slice(b)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const doc = readFileSync(DOC, 'utf8');
  const next = withTable(doc, renderTable());
  if (process.argv.includes('--write')) writeFileSync(DOC, next);
  else if (process.argv.includes('--check')) {
    if (next !== doc) {
      console.error('docs/BENCHMARKS.md: the table of figures differs from bench/results; run `node bench/table.mjs --write`');
      process.exit(1);
    }
  } else console.log(renderTable());
}
