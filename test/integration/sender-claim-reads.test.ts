import { sql } from 'kysely';
import { createDb, ScheduleRepository, senderRepositories, TargetSendRepository } from '@metronome/db';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { claimAt, claimHelpers, sentAs, settleSentAndClaim } from './sender-claims.fixture.js';

// What the sender's claim statements read on real PostgreSQL (index statistics of a connection
// of their own): the targets they take and hold, never the whole run or every target once in flight.

let h: SenderHarness;
beforeEach(async () => {
  h = await startSenderHarness();
});
afterEach(async () => {
  await h.close();
});
const { runningRun, withPlans, request } = claimHelpers(() => h);

test("a sender's writes to its in-flight targets go by the primary key, never through the reconciler's lease index", async () => {
  // That index keeps an entry for every target ever in flight until vacuum removes it; a
  // sender's write planned through it read them all (migrations/0013_lease_index.sql). A
  // sender's statements run on generic plans after five calls: this connection has them at once.
  await withPlans('force_generic_plan', async (db, indexStat) => {
    const targets = new TargetSendRepository(db);
    const leaseIndexScans = () => indexStat('idx_scan', sql`indexrelname = 'run_targets_lease_idx'`);
    // a run of some size, so that the planner's choice of index is the one a deployment sees
    const runId = await runningRun(['a', 'b', 'c', 'd', ...Array.from({ length: 1000 }, (_, k) => `x-${k}`)]);
    const now = h.clock.now();
    const before = await leaseIndexScans();
    for (let i = 0; i < 3; i++) await settleSentAndClaim(targets, runId, 'owner-1', [], claimAt(now));
    await targets.writePartsMany(
      [
        { runId, target: { chatId: 'a' }, owner: 'owner-1', startedAt: new Date(now) },
        { runId, target: { chatId: 'b' }, owner: 'owner-1', partsSent: 1, messageId: 'm-b' },
      ],
      new Date(now),
    );
    await settleSentAndClaim(targets, runId, 'owner-1', [sentAs('a', now)], claimAt(now));
    await settleSentAndClaim(targets, runId, 'owner-1', [sentAs('b', now)], claimAt(now, 0));
    await targets.settle(runId, { chatId: 'c' }, 'owner-1', { status: 'failed', errorCode: 'x', errorMessage: 'x', countAttempt: true }, new Date(now));
    await targets.releaseClaims(runId, 'owner-1', [], new Date(now));
    expect(await leaseIndexScans()).toBe(before);
    // the reconciler's expiry is what the index is for: it does use it, so the count above can
    // move (planned for its values, as the scheduler plans each of its statements)
    await settleSentAndClaim(targets, runId, 'owner-1', [], claimAt(now));
    await sql`set plan_cache_mode = force_custom_plan`.execute(db);
    await new ScheduleRepository(db).expireLeases(new Date(now + 120_000));
    expect(await leaseIndexScans()).toBeGreaterThan(before);
  });
});

test('a claim reads only the due targets it takes, however many are due', async () => {
  // A claim takes a few due targets in a fixed order (due time, then chat). Without that order
  // in an index it read all of a large run's due targets and sorted them: 3.3 ms per claim with
  // 5,000 due (migrations/0014_claim_order_index.sql). Generic plans, as a sender's statements
  // get after five calls; the entries read are counted by PostgreSQL's statistics.
  const runId = await runningRun(Array.from({ length: 2000 }, (_, i) => `chat-${String(i).padStart(4, '0')}`));
  await withPlans('force_generic_plan', async (db, indexStat) => {
    const targets = new TargetSendRepository(db);
    // the targets' index entries read other than by the indexes the writes use to find the rows
    // they change (the claim's write may read the run's key prefix: see the migration)
    const entriesRead = () => indexStat('idx_tup_read', sql`indexrelname not in ('run_targets_pkey', 'run_targets_held_idx')`);
    const now = h.clock.now();
    const before = await entriesRead();
    const claimed: string[] = [];
    let carried: ReturnType<typeof sentAs>[] = [];
    for (let i = 0; i < 5; i++) {
      const claim = await settleSentAndClaim(targets, runId, 'owner-1', carried, claimAt(now, 3));
      claimed.push(...claim.claimed.map((t) => t.chatId));
      carried = claim.claimed.map((t) => sentAs(t.chatId, now));
    }
    // in order, three at a time
    expect(claimed).toEqual(Array.from({ length: 15 }, (_, i) => `chat-${String(i).padStart(4, '0')}`));
    // a few entries per claim, not the 2,000 due (the slack: other sessions' reads flushed late)
    expect((await entriesRead()) - before).toBeLessThan(5 * 10);
  });
});

test("a job's last statement does not count a run with a target still pending", async () => {
  // Counting reads every target of the run: 3 ms at the end of each job of a 10,000-chat run.
  const runId = await runningRun(Array.from({ length: 2000 }, (_, i) => `chat-${i}`));
  await withPlans('force_generic_plan', async (db, indexStat) => {
    const targets = new TargetSendRepository(db);
    const now = h.clock.now();
    await settleSentAndClaim(targets, runId, 'owner-1', [], claimAt(now, 3));
    const before = await indexStat('idx_tup_read', sql`true`);
    for (let i = 0; i < 5; i++) expect((await targets.settleSentAndCount(runId, 'owner-1', [], new Date(now))).progress).toMatchObject({ stillPending: true });
    // the next pending target's entry, not the run's 2,000 (the slack: other sessions' reads flushed late)
    expect((await indexStat('idx_tup_read', sql`true`)) - before).toBeLessThan(5 * 10);
  });
});

test("a job's writes of its answers read only the targets it holds, however large the run", async () => {
  // Found by the run's key alone, a write read every target of the run: 1.5 ms at 10,000
  // (migrations/0014_claim_order_index.sql). The held targets' index keeps it to the job's own.
  const runId = await runningRun(Array.from({ length: 2000 }, (_, i) => `chat-${i}`));
  await withPlans('force_generic_plan', async (db, indexStat) => {
    const targets = new TargetSendRepository(db);
    const now = h.clock.now();
    const held = (await settleSentAndClaim(targets, runId, 'owner-1', [], claimAt(now, 10))).claimed.map((t) => t.chatId);
    const before = await indexStat('idx_tup_read', sql`true`);
    // answers written without a claim (a limit of 0) read no due target
    for (let i = 0; i < 5; i++)
      expect(await settleSentAndClaim(targets, runId, 'owner-1', [sentAs(held[i]!, now)], claimAt(now, 0))).toEqual({
        settled: new Set([held[i]]),
        claimed: [],
        firstSend: false,
      });
    const last = await targets.settleSentAndCount(
      runId,
      'owner-1',
      held.slice(5).map((c) => sentAs(c, now)),
      new Date(now),
    );
    expect(last.settled).toEqual(new Set(held.slice(5)));
    // the job's few entries, not the run's 2,000 (the slack: other sessions' reads flushed late)
    expect((await indexStat('idx_tup_read', sql`true`)) - before).toBeLessThan(6 * 15);
  });
});

test("a run's start reads the run by its key, not every queued run's entry", async () => {
  // The start also skips the run's suppressed chats, joining the run; a generic plan read that
  // run through runs_open_idx, every queued run's entry, at each run's start.
  const { tenantId, accountId } = await h.seedAccount();
  const queued: string[] = [];
  for (let i = 0; i < 200; i++) queued.push(await h.seedRun({ tenantId, accountId, targets: ['a'], parts: [{ type: 'text', text: 'x' }] }));
  await withPlans('force_generic_plan', async (db, indexStat) => {
    const runs = senderRepositories(db).runs;
    const before = await indexStat('idx_tup_read', sql`indexrelname = 'runs_open_idx'`, 'runs');
    for (const runId of queued.slice(0, 6)) expect(await runs.markRunning(runId, new Date(h.clock.now()))).toBe(true);
    // none of the 200 queued runs' entries (the slack: other sessions' reads flushed late)
    expect((await indexStat('idx_tup_read', sql`indexrelname = 'runs_open_idx'`, 'runs')) - before).toBeLessThan(6 * 5);
  });
}, 30_000); // 200 runs seeded one statement each: more than jest's 5 s default on a loaded machine

test('the start of 1–3 runs keeps a generic plan rather than being planned at every call', async () => {
  // Its planning cost as much as its work: with the arrays' sizes in sight each custom plan looked
  // cheaper than the generic one (run-repository.ts, markRunningMany)
  const { tenantId, accountId } = await h.seedAccount();
  const queued: string[] = [];
  for (let i = 0; i < 20; i++) queued.push(await h.seedRun({ tenantId, accountId, targets: ['a', 'b'], parts: [{ type: 'text', text: 'x' }] }));
  // a history beside them, analysed: on a few rows a custom plan costs the same as the generic one
  await sql`
    with r as (
      insert into runs (campaign_id, tenant_id, account_id, trigger, status, parts, total, scheduled_at, job_id, job_seq, created_at, updated_at)
      select q.campaign_id, q.tenant_id, q.account_id, 'schedule', 'success', q.parts, 5, q.scheduled_at - make_interval(secs => g), 'job', 0, q.created_at, q.updated_at
        from runs q, generate_series(1, 5000) g where q.id = ${queued[0]}::uuid
      returning id, scheduled_at)
    insert into run_targets (run_id, chat_id, status, next_attempt_at, updated_at)
    select r.id, 'chat-' || k, 'sent', r.scheduled_at, r.scheduled_at from r, generate_series(1, 5) k`.execute(h.tdb.db);
  await sql`analyze runs, run_targets`.execute(h.tdb.db);
  const db = createDb({ url: h.tdb.url, max: 1 });
  try {
    const runs = senderRepositories(db).runs;
    const at = new Date(h.clock.now());
    for (let i = 0, k = 0; k < 10; k++) {
      const size = 1 + (k % 3);
      const batch = queued.slice(i, i + size).map((runId) => ({ runId, at }));
      i += size;
      expect((await runs.markRunningMany(batch, at)).size).toBe(size);
    }
    const plans = await sql<{ generic: number; custom: number }>`
      select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement like '%with asked as materialized%'`.execute(
      db,
    );
    // PostgreSQL plans the first five calls for their values, then compares
    expect(plans.rows).toEqual([{ generic: 5, custom: 5 }]);
  } finally {
    await db.destroy();
  }
});

test('a statement for several runs reads only the due targets it takes and the targets its jobs hold', async () => {
  // As a single run's claim (above): a join of the jobs with their runs' targets planned as a
  // scan would read every target of every run.
  const runs = [await runningRun(Array.from({ length: 1000 }, (_, i) => `chat-${i}`)), await runningRun(Array.from({ length: 1000 }, (_, i) => `chat-${i}`))];
  await withPlans('force_generic_plan', async (db, indexStat) => {
    const targets = new TargetSendRepository(db);
    const now = h.clock.now();
    const before = await indexStat('idx_tup_read', sql`true`);
    let carried: ReturnType<typeof sentAs>[][] = [[], []];
    for (let i = 0; i < 5; i++) {
      const results = await targets.settleSentAndClaimMany(
        runs.map((runId, k) => request(runId, `job-${k}`, 3, carried[k])),
        new Date(now),
        true,
      );
      expect(results.map((r) => r.claimed.length)).toEqual([3, 3]);
      carried = results.map((r) => r.claimed.map((t) => sentAs(t.chatId, now)));
    }
    // a few entries per run and statement, not the runs' 2,000. The rows the series claimed and
    // settled keep their entries in the due and held indexes until a vacuum; whether a scan skips
    // them depends on the run_targets statistics (an autoanalyze may or may not have come after
    // the seeding): 146 entries without, 246 with, so 40 per run and statement.
    expect((await indexStat('idx_tup_read', sql`true`)) - before).toBeLessThan(5 * 2 * 40);
  });
});

test.each(['auto', 'force_generic_plan'] as const)(
  'a delivery is written by reading its own row, however many rows were in flight before (%s plans)',
  async (mode) => {
    // Every row once in flight keeps its entry in the held targets' index until a vacuum: as a
    // plain join, the write read that whole index (13,000 entries, 495 table pages, in one
    // `throughput` run), a bitmap scan that never marks an entry dead.
    const runId = await runningRun(Array.from({ length: 2003 }, (_, i) => `chat-${String(i).padStart(4, '0')}`));
    const now = h.clock.now();
    const earlier = (await settleSentAndClaim(h.deps.targets, runId, 'job-0', [], claimAt(now, 2000))).claimed;
    await settleSentAndClaim(
      h.deps.targets,
      runId,
      'job-0',
      earlier.map((t) => sentAs(t.chatId, now)),
      claimAt(now, 0),
    );
    await withPlans(mode, async (db, indexStat) => {
      const targets = new TargetSendRepository(db);
      const held = (await settleSentAndClaim(targets, runId, 'job-1', [], claimAt(now, 3))).claimed.map((t) => t.chatId);
      expect(held).toEqual(['chat-2000', 'chat-2001', 'chat-2002']);
      const before = await indexStat('idx_tup_read', sql`true`);
      // (answers only, a limit of 0: no due target read, and the run not counted)
      expect((await settleSentAndClaim(targets, runId, 'job-1', [sentAs(held[0]!, now)], claimAt(now, 0))).settled).toEqual(new Set([held[0]]));
      expect(
        (
          await settleSentAndClaim(
            targets,
            runId,
            'job-1',
            held.slice(1).map((c) => sentAs(c, now)),
            claimAt(now, 0),
          )
        ).settled,
      ).toEqual(new Set(held.slice(1)));
      // a few entries for each of the three, not the 2,000 once in flight (the slack: other sessions' reads flushed late)
      expect((await indexStat('idx_tup_read', sql`true`)) - before).toBeLessThan(3 * 15);
    });
  },
);
