import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createScratchDatabase } from '@metronome/testkit';
import { createDb, ErasureRepository, RetentionRepository } from '../../libs/db/dist/index.js';
import { retentionSweep } from '../../services/scheduler/dist/retention-sweep.js';
import { HISTORY_DAYS, HISTORY_TARGETS_PER_RUN, historyBytes } from './history-fill.mjs';
import { filledTemplate, HISTORY_TOKEN_HASH } from './history.mjs';

// How big the database is once the retention sweep has run (issue 35: "database size after a
// retention sweep within 10 % of what the retention settings predict"). A clone of the history
// scenario's filled database (1,000,000 finished runs of 20 chats over 400 days by default) is
// weighed as written, then compacted (`VACUUM FULL`) and weighed again: the bytes per target,
// event and run the prediction takes. It is then swept by the scheduler's own sweep at the
// default retention (90 days of history, 400 of summaries), all at once (no pause: nothing
// sends beside it), compacted again (the files do not shrink by themselves: docs/OPERATIONS.md)
// and weighed against docs/OPERATIONS.md's formula ("How big will my database be") with those
// bytes per row, and with the bytes per row the document states (read from it, so that a
// stale figure there shows here).
const OPERATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../docs/OPERATIONS.md');
const DAY_MS = 86_400_000;
const POLICY = { historyMs: 90 * DAY_MS, summaryMs: 400 * DAY_MS };

export async function historySize(env) {
  const runs = env.quick ? 20_000 : Number(process.env.BENCH_HISTORY_RUNS ?? 1_000_000);
  const formula = operationsFormula();
  const template = await filledTemplate(env.databaseUrl, runs, HISTORY_TOKEN_HASH);
  const scratch = await createScratchDatabase(env.databaseUrl, 'history_size', template);
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const db = createDb({ url: scratch.url, max: 2, applicationName: 'history-size' });
  try {
    const written = await weigh(client, scratch.url);
    // the same rows compacted, as VACUUM FULL leaves them: the bytes per row the prediction takes
    let waitedForOthersSeconds = await othersDone(client);
    await client.query('vacuum full analyze runs, run_targets, run_events');
    const before = await weigh(client, scratch.url);
    const perRow = {
      target: before.run_targets.bytes / before.run_targets.rows,
      event: before.run_events.bytes / before.run_events.rows,
      summary: before.runs.bytes / before.runs.rows + formula.countsExtra,
    };
    const started = Date.now();
    const deleted = await retentionSweep({
      retention: new RetentionRepository(db),
      erasure: new ErasureRepository(db),
      clock: { now: () => Date.now() },
      policy: POLICY,
      batch: Number(process.env.RETENTION_BATCH ?? 10_000),
      pauseMs: 0,
      keepGoing: () => true,
      counted: () => undefined,
    });
    const sweepSeconds = (Date.now() - started) / 1000;
    const swept = await weigh(client, scratch.url);
    waitedForOthersSeconds += await othersDone(client);
    await client.query('vacuum full analyze runs, run_targets, run_events');
    const after = await weigh(client, scratch.url);
    const countsBytes = Number((await client.query('select avg(pg_column_size(summary_counts)) as b from runs where summary_counts is not null')).rows[0].b);
    // R runs a day of N chats, H days of history and S of summaries (both within the history's span)
    const perDay = runs / HISTORY_DAYS;
    const [H, S] = [Math.min(90, HISTORY_DAYS), Math.min(400, HISTORY_DAYS)];
    const predict = (b) => perDay * H * (b.target * HISTORY_TARGETS_PER_RUN + b.event * 3) + perDay * S * b.summary;
    const measured = after.total;
    return {
      params: {
        runs,
        days: HISTORY_DAYS,
        targetsPerRun: HISTORY_TARGETS_PER_RUN,
        policy: POLICY,
        formula,
        batch: Number(process.env.RETENTION_BATCH ?? 10_000),
      },
      figures: {
        'history runs': runs,
        'history tables MB as written': mb(written.total),
        'history tables MB compacted (VACUUM FULL), before the sweep': mb(before.total),
        'bytes per target · event · run, compacted before the sweep': [perRow.target, perRow.event, perRow.summary - formula.countsExtra]
          .map(Math.round)
          .join(' · '),
        'bytes per target · event · summary in docs/OPERATIONS.md': [formula.target, formula.event, formula.summary].join(' · '),
        'rows the sweep deleted': deleted,
        'sweep rows/s (all at once, nothing else running)': deleted / sweepSeconds,
        'history tables MB after the sweep, before VACUUM FULL': mb(swept.total),
        'history tables MB after VACUUM FULL': mb(measured),
        'predicted MB (the formula, bytes per row measured before the sweep)': mb(predict(perRow)),
        'measured / predicted (goal within 0.9–1.1)': measured / predict(perRow),
        'predicted MB (docs/OPERATIONS.md as written)': mb(predict(formula)),
        'measured / docs/OPERATIONS.md': measured / predict(formula),
        'summary counts bytes (mean)': countsBytes,
        'targets left': after.run_targets.rows,
        'targets predicted': Math.round(perDay * H * HISTORY_TARGETS_PER_RUN),
      },
      written,
      before,
      swept,
      after,
      sweepSeconds,
      waitedForOthersSeconds,
    };
  } finally {
    await db.destroy();
    await client.end();
    await scratch.drop();
  }
}

const mb = (bytes) => Math.round(bytes / 1e6);

/**
 * Waits (at most 20 minutes) until no transaction begun before now is still open in any
 * database: VACUUM FULL keeps every row such a transaction might still see (seen here: a
 * transaction of another database kept all the swept rows). Returns the seconds waited.
 */
async function othersDone(client) {
  const started = Date.now();
  const now = (await client.query('select clock_timestamp() as t')).rows[0].t;
  while (Date.now() - started < 1_200_000) {
    const open = await client.query(
      `select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid() and xact_start < $1`,
      [now],
    );
    if (open.rows[0].n === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return (Date.now() - started) / 1000;
}

/** Each history table's rows and bytes (historyBytes), their sum, and where the bytes are: each table's heap and TOAST, each index. */
async function weigh(client, url) {
  const tables = await historyBytes(url);
  const total = Object.values(tables).reduce((sum, t) => sum + t.bytes, 0);
  const relations = Object.fromEntries(
    (
      await client.query(
        `select c.relname, pg_relation_size(c.oid)::bigint + coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)::bigint as bytes
           from pg_class c join pg_class t on t.oid = coalesce((select indrelid from pg_index where indexrelid = c.oid), c.oid)
          where t.relname in ('runs', 'run_targets', 'run_events') and c.relkind in ('r', 'i')
          order by bytes desc`,
      )
    ).rows.map((r) => [r.relname, Number(r.bytes)]),
  );
  return { ...tables, total, relations };
}

/** The bytes per target, event and run summary in docs/OPERATIONS.md's formula line. */
function operationsFormula() {
  const text = readFileSync(OPERATIONS, 'utf8');
  const m = /bytes ≈ R × H × \(([\d,]+) × N \+ ([\d,]+) × 3\) \+ R × S × ([\d,]+)/.exec(text);
  if (!m) throw new Error('docs/OPERATIONS.md: the size formula line ("bytes ≈ R × H × (…) + R × S × …") is not where history-size reads it');
  const n = (s) => Number(s.replace(/,/g, ''));
  const extra = /about ([\d,]+) more once it is a summary/.exec(text);
  if (!extra)
    throw new Error('docs/OPERATIONS.md: the bytes a summary adds to a run ("about … more once it is a summary") are not where history-size reads them');
  return { target: n(m[1]), event: n(m[2]), summary: n(m[3]), countsExtra: n(extra[1]) };
}
