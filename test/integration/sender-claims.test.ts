import { sql, type Kysely, type RawBuilder } from 'kysely';
import { createDb, ScheduleRepository, senderRepositories, TargetSendRepository, type ClaimRequest, type ClaimResult, type DB, type SentSettlement } from '@metronome/db';
import { ClaimStatements, type JobClaim } from '../../services/sender/src/claim-statements.js';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// The fused claim (`settleSentAndClaimMany`) on real PostgreSQL: one round trip, and the lease
// still fences it; with a limit of 0 it only writes deliveries (answers no claim came to carry).

let h: SenderHarness;
beforeEach(async () => {
  h = await startSenderHarness();
});
afterEach(async () => {
  await h.close();
});

async function runningRun(targets: string[]): Promise<string> {
  const { tenantId, accountId } = await h.seedAccount();
  const runId = await h.seedRun({ tenantId, accountId, targets, parts: [{ type: 'text', text: 'x' }] });
  await h.deps.repo.runs.markRunning(runId, new Date(h.clock.now()));
  return runId;
}

/** A claim at `now`, leased a minute, not stamped as sending, for `limit` lanes. */
const claimAt = (now: number, limit = 1) => ({ now: new Date(now), leaseUntil: new Date(now + 60_000), sending: false, firstSendKnown: false, limit });

/** One job's claim statement (settleSentAndClaimMany with one request). */
async function settleSentAndClaim(targets: TargetSendRepository, runId: string, owner: string, sent: SentSettlement[], o: ReturnType<typeof claimAt>): Promise<ClaimResult> {
  const [result] = await targets.settleSentAndClaimMany([{ runId, owner, sent, leaseUntil: o.leaseUntil, firstSendKnown: o.firstSendKnown, limit: o.limit }], o.now, o.sending);
  return result!;
}

const sentAs = (chatId: string, now: number) => ({ chatId, at: new Date(now), latencyMs: 5, partsSent: 1, messageId: `m-${chatId}` });

type PlanWork = (db: Kysely<DB>, indexStat: (column: 'idx_scan' | 'idx_tup_read', indexes: RawBuilder<unknown>, table?: 'run_targets' | 'runs') => Promise<number>) => Promise<void>;

/**
 * Runs `work` on a connection of its own with the plan cache mode given (generic plans, as a
 * sender's statements may get after five calls; 'auto': PostgreSQL's own choice), and a reader of
 * PostgreSQL's index statistics for `run_targets` (or `runs`; `indexes`: a SQL condition on
 * `indexrelname`), flushed for that connection first.
 */
/**
 * The shared pool's backends (seeding, the harness) keep their index statistics pending for up
 * to 10 s after their last statement; read late, they would count as the measured work's reads.
 * One forced flush on each of its connections (all held at once, so each is a different one).
 */
async function flushSharedPoolStats(): Promise<void> {
  await Promise.all(Array.from({ length: 5 }, () => sql`select pg_stat_force_next_flush(), pg_sleep(0.05)`.execute(h.tdb.db)));
}

async function withPlans(mode: 'auto' | 'force_generic_plan' | 'force_custom_plan', work: PlanWork): Promise<void> {
  const db = createDb({ url: h.tdb.url, max: 1 });
  try {
    await sql`select set_config('plan_cache_mode', ${mode}, false)`.execute(db);
    await work(db, async (column, indexes, table = 'run_targets') => {
      await sql`select pg_stat_force_next_flush()`.execute(db);
      await flushSharedPoolStats();
      const row = await sql<{ n: number }>`select coalesce(sum(${sql.ref(column)}), 0)::int as n from pg_stat_user_indexes where relname = ${table} and ${indexes}`.execute(h.tdb.db);
      return row.rows[0]!.n;
    });
  } finally {
    await db.destroy();
  }
}

test('writes the last delivery and claims the next in one statement, never the one it settles', async () => {
  const runId = await runningRun(['a', 'b']);
  const now = h.clock.now();
  const first = await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], claimAt(now));
  expect(first).toEqual({ settled: new Set(), claimed: [{ chatId: 'a', partsSent: 0, attempts: 0, errorCode: null }], firstSend: false });
  const second = await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [sentAs('a', now)], claimAt(now));
  expect(second).toEqual({ settled: new Set(['a']), claimed: [{ chatId: 'b', partsSent: 0, attempts: 0, errorCode: null }], firstSend: false });
  const third = await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [sentAs('b', now)], claimAt(now));
  expect(third).toEqual({ settled: new Set(['b']), claimed: [], firstSend: false });
  const targets = await h.targets(runId);
  expect(targets.map((t) => [t.chat_id, t.status, t.attempts, t.parts_sent])).toEqual([
    ['a', 'sent', 1, 1],
    ['b', 'sent', 1, 1],
  ]);
});

test("one claim carries every answer the job holds, whichever lane delivered it, and writes only its holder's", async () => {
  const runId = await runningRun(['a', 'b', 'c', 'd']);
  const now = h.clock.now();
  // three lanes hold a, b and c; another token's claim holds d
  for (let i = 0; i < 3; i++) await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], claimAt(now));
  await settleSentAndClaim(h.deps.targets, runId, 'owner-2', [], claimAt(now));
  const claim = await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [sentAs('a', now), sentAs('b', now), sentAs('d', now)], claimAt(now));
  expect(claim).toEqual({ settled: new Set(['a', 'b']), claimed: [], firstSend: false });
  const targets = await h.targets(runId);
  expect(targets.map((t) => [t.chat_id, t.status, t.attempts, t.parts_sent])).toEqual([
    ['a', 'sent', 1, 1],
    ['b', 'sent', 1, 1],
    ['c', 'in_flight', 0, 0],
    ['d', 'in_flight', 0, 0],
  ]);
});

test('a holder whose lease is gone writes nothing, alone or in a batch', async () => {
  const runId = await runningRun(['a', 'b', 'c']);
  const now = h.clock.now();
  await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], claimAt(now)); // a
  await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], claimAt(now)); // b
  // another token (a later holder of the account lock) cannot settle owner-1's target
  const stale = await settleSentAndClaim(h.deps.targets, runId, 'owner-2', [sentAs('a', now)], claimAt(now));
  expect(stale.settled).toEqual(new Set());
  expect(stale.claimed.map((t) => t.chatId)).toEqual(['c']);
  // answers written without a claim (a limit of 0), as a job writes those held too long
  const written = await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [sentAs('a', now), sentAs('b', now), sentAs('c', now)], claimAt(now, 0));
  expect(written).toEqual({ settled: new Set(['a', 'b']), claimed: [], firstSend: false });
  const targets = await h.targets(runId);
  expect(targets.map((t) => [t.chat_id, t.status])).toEqual([
    ['a', 'sent'],
    ['b', 'sent'],
    ['c', 'in_flight'],
  ]);
});

test('nothing is claimed once the run is no longer running (operator pause)', async () => {
  const runId = await runningRun(['a']);
  await h.deps.repo.runs.pause(runId, 'operator', null, new Date(h.clock.now()));
  const claim = await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], claimAt(h.clock.now()));
  expect(claim).toEqual({ settled: new Set(), claimed: [], firstSend: false });
});

test("the job's last write and the run's counts are one statement, the answers it writes counted as sent", async () => {
  const runId = await runningRun(['a', 'b', 'c']);
  const now = h.clock.now();
  await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], claimAt(now)); // a
  await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], claimAt(now)); // b
  // c is still pending: the run is not counted (it cannot finish), only when c comes due is read
  const cDue = (await h.targets(runId)).find((t) => t.chat_id === 'c')!.next_attempt_at;
  expect(await h.deps.targets.settleSentAndCount(runId, 'owner-1', [sentAs('a', now)], new Date(now))).toEqual({
    settled: new Set(['a']),
    progress: { stillPending: true, nextDueAt: cDue },
  });
  expect((await h.targets(runId)).map((t) => [t.chat_id, t.status])).toEqual([
    ['a', 'sent'],
    ['b', 'in_flight'],
    ['c', 'pending'],
  ]);
  await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], claimAt(now)); // c
  // c is delivered; b is held by a lease another token no longer has (written by nobody)
  const last = await h.deps.targets.settleSentAndCount(runId, 'owner-1', [sentAs('c', now), { ...sentAs('b', now), chatId: 'x' }], new Date(now));
  expect(last.settled).toEqual(new Set(['c']));
  expect(last.progress).toEqual({ total: 3, pending: 0, inFlight: 1, sent: 2, failed: 0, skipped: 0, unknown: 0, nextDueAt: null, anyAttempt: true });
  // the same counts as the plain read, now that the write is committed
  expect(await h.deps.repo.runs.progress(runId)).toEqual(last.progress);
  // with nothing to write, only the counts
  expect((await h.deps.targets.settleSentAndCount(runId, 'owner-1', [], new Date(now))).progress).toEqual(last.progress);
});

test('one statement claims a target for each waiting lane, in the order they came due, never one another holder has', async () => {
  const runId = await runningRun(['a', 'b', 'c', 'd', 'e']);
  const now = h.clock.now();
  // another job's token holds a, which comes due first
  expect((await settleSentAndClaim(h.deps.targets, runId, 'owner-2', [], claimAt(now))).claimed.map((t) => t.chatId)).toEqual(['a']);
  const sending = { ...claimAt(now, 3), sending: true };
  const batch = await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [], sending);
  expect(batch.claimed.map((t) => t.chatId)).toEqual(['b', 'c', 'd']);
  // the run's first send is stamped once, with the batch
  expect(batch.firstSend).toBe(true);
  // fewer are due than lanes wait: the rest come back empty-handed
  const rest = await settleSentAndClaim(h.deps.targets, runId, 'owner-1', [sentAs('b', now)], { ...sending, limit: 4, firstSendKnown: true });
  expect(rest).toEqual({ settled: new Set(['b']), claimed: [{ chatId: 'e', partsSent: 0, attempts: 0, errorCode: null }], firstSend: false });
  const targets = await h.targets(runId);
  expect(targets.map((t) => [t.chat_id, t.status, t.lease_owner, t.send_started_at !== null])).toEqual([
    ['a', 'in_flight', 'owner-2', false],
    ['b', 'sent', null, false],
    ['c', 'in_flight', 'owner-1', true],
    ['d', 'in_flight', 'owner-1', true],
    ['e', 'in_flight', 'owner-1', true],
  ]);
});

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
    await targets.markSending(runId, 'a', 'owner-1', new Date(now), new Date(now));
    await settleSentAndClaim(targets, runId, 'owner-1', [sentAs('a', now)], claimAt(now));
    await settleSentAndClaim(targets, runId, 'owner-1', [sentAs('b', now)], claimAt(now, 0));
    await targets.settle(runId, 'c', 'owner-1', { status: 'failed', errorCode: 'x', errorMessage: 'x', countAttempt: true }, new Date(now));
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
    for (let i = 0; i < 5; i++) expect(await settleSentAndClaim(targets, runId, 'owner-1', [sentAs(held[i]!, now)], claimAt(now, 0))).toEqual({ settled: new Set([held[i]]), claimed: [], firstSend: false });
    const last = await targets.settleSentAndCount(runId, 'owner-1', held.slice(5).map((c) => sentAs(c, now)), new Date(now));
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

// A sender's concurrent jobs share their claim statements (claim-statements.ts): one statement
// settles and claims for several runs, each job's writes fenced by its own lease owner.

const request = (runId: string, owner: string, limit: number, sent: ReturnType<typeof sentAs>[] = [], firstSendKnown = false): ClaimRequest => ({
  runId,
  owner,
  sent,
  leaseUntil: new Date(h.clock.now() + 60_000),
  firstSendKnown,
  limit,
});

test('one statement claims for several runs, each up to its own limit, and settles each job only what its lease still holds', async () => {
  const one = await runningRun(['a', 'b', 'c']);
  const two = await runningRun(['a', 'b', 'c']);
  const now = h.clock.now();
  const first = await h.deps.targets.settleSentAndClaimMany([request(one, 'job-1', 2), request(two, 'job-2', 1, [], true)], new Date(now), true);
  expect(first.map((r) => r.claimed.map((t) => t.chatId))).toEqual([['a', 'b'], ['a']]);
  // each run's first send stamped only where it was asked for
  expect(first.map((r) => r.firstSend)).toEqual([true, false]);
  const firstSends = await h.tdb.db.selectFrom('runs').select(['id', 'first_send_at']).where('id', 'in', [one, two]).execute();
  expect(Object.fromEntries(firstSends.map((r) => [r.id, r.first_send_at !== null]))).toEqual({ [one]: true, [two]: false });
  // job-2 carries an answer for a chat of run one, which job-1 holds: not written; its own is
  const second = await h.deps.targets.settleSentAndClaimMany(
    [request(two, 'job-2', 5, [sentAs('a', now)], true), request(one, 'job-1', 1, [sentAs('a', now)], true)],
    new Date(now),
    true,
  );
  expect(second.map((r) => [...r.settled])).toEqual([['a'], ['a']]);
  expect(second.map((r) => r.claimed.map((t) => t.chatId))).toEqual([['b', 'c'], ['c']]);
  const wrongOwner = await h.deps.targets.settleSentAndClaimMany([request(one, 'job-2', 1, [sentAs('b', now)])], new Date(now), true);
  expect(wrongOwner[0]!.settled.size).toBe(0);
  const state = async (runId: string) => (await h.targets(runId)).map((t) => [t.chat_id, t.status, t.lease_owner]);
  expect(await state(one)).toEqual([
    ['a', 'sent', null],
    ['b', 'in_flight', 'job-1'],
    ['c', 'in_flight', 'job-1'],
  ]);
  expect(await state(two)).toEqual([
    ['a', 'sent', null],
    ['b', 'in_flight', 'job-2'],
    ['c', 'in_flight', 'job-2'],
  ]);
});

test("jobs that claim while the sender's statement is out go together in its next one", async () => {
  const runs = [await runningRun(['a', 'b']), await runningRun(['a', 'b']), await runningRun(['a', 'b'])];
  const statements: string[][] = [];
  const targets = h.deps.targets;
  const claimMany = targets.settleSentAndClaimMany.bind(targets);
  targets.settleSentAndClaimMany = async (requests, now, sending) => {
    statements.push(requests.map((r) => r.runId));
    return claimMany(requests, now, sending);
  };
  // one statement out at a time here (a sender has two: group-commit.test.ts tests that rule)
  const claims = new ClaimStatements(targets, h.clock, 1);
  const job = (runId: string, limit: number): JobClaim => ({ runId, owner: `job-${runId}`, sent: [], leaseMs: 60_000, firstSendKnown: false, limit });
  const results = await Promise.all([claims.claim(true, job(runs[0]!, 1)), claims.claim(true, job(runs[1]!, 2)), claims.claim(true, job(runs[2]!, 1))]);
  expect(statements).toEqual([[runs[0]], [runs[1], runs[2]]]);
  expect(results.map((r) => r.claimed.map((t) => t.chatId))).toEqual([['a'], ['a', 'b'], ['a']]);
  // each job's leases run from its own statement's moment
  expect(results.every((r) => r.at === h.clock.now())).toBe(true);
  // a job's answers held too long for a claim to carry (a limit of 0) ride with another job's claim
  const out = claims.claim(true, job(runs[2]!, 1));
  const [written, next] = await Promise.all([claims.claim(true, { ...job(runs[0]!, 0), sent: [sentAs('a', h.clock.now())] }), claims.claim(true, job(runs[2]!, 1))]);
  await out;
  expect(statements.slice(2)).toEqual([[runs[2]], [runs[0], runs[2]]]);
  expect(written).toMatchObject({ settled: new Set(['a']), claimed: [] });
  expect(next.claimed).toEqual([]);
  expect((await h.targets(runs[0]!)).map((t) => [t.chat_id, t.status])).toEqual([
    ['a', 'sent'],
    ['b', 'pending'],
  ]);
});

test('a statement refused for one run fails that job alone; the others it carried still claim', async () => {
  const good = await runningRun(['a']);
  const bad = await runningRun(['a']);
  // one statement out at a time, so the refused job and the good one share a statement
  const claims = new ClaimStatements(h.deps.targets, h.clock, 1);
  const job = (runId: string, limit: number): JobClaim => ({ runId, owner: `job-${runId}`, sent: [], leaseMs: 60_000, firstSendKnown: false, limit });
  const out = claims.claim(true, job(good, 1));
  // a refusal PostgreSQL gives for what the statement said (not transient): a negative LIMIT
  const [refused, claimed] = await Promise.allSettled([claims.claim(true, job(bad, -1)), claims.claim(true, job(good, 1))]);
  expect((await out).claimed.map((t) => t.chatId)).toEqual(['a']);
  expect(refused).toMatchObject({ status: 'rejected', reason: { code: '2201W' } });
  // the good run's job claimed nothing more (its one target is held), but its statement went
  expect(claimed).toMatchObject({ status: 'fulfilled', value: { claimed: [] } });
  expect((await h.targets(bad)).map((t) => t.status)).toEqual(['pending']);
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

test.each(['auto', 'force_generic_plan'] as const)("a delivery is written by reading its own row, however many rows were in flight before (%s plans)", async (mode) => {
  // Every row once in flight keeps its entry in the held targets' index until a vacuum: as a
  // plain join, the write read that whole index (13,000 entries, 495 table pages, in one
  // `throughput` run), a bitmap scan that never marks an entry dead.
  const runId = await runningRun(Array.from({ length: 2003 }, (_, i) => `chat-${String(i).padStart(4, '0')}`));
  const now = h.clock.now();
  const earlier = (await settleSentAndClaim(h.deps.targets, runId, 'job-0', [], claimAt(now, 2000))).claimed;
  await settleSentAndClaim(h.deps.targets, runId, 'job-0', earlier.map((t) => sentAs(t.chatId, now)), claimAt(now, 0));
  await withPlans(mode, async (db, indexStat) => {
    const targets = new TargetSendRepository(db);
    const held = (await settleSentAndClaim(targets, runId, 'job-1', [], claimAt(now, 3))).claimed.map((t) => t.chatId);
    expect(held).toEqual(['chat-2000', 'chat-2001', 'chat-2002']);
    const before = await indexStat('idx_tup_read', sql`true`);
    // (answers only, a limit of 0: no due target read, and the run not counted)
    expect((await settleSentAndClaim(targets, runId, 'job-1', [sentAs(held[0]!, now)], claimAt(now, 0))).settled).toEqual(new Set([held[0]]));
    expect((await settleSentAndClaim(targets, runId, 'job-1', held.slice(1).map((c) => sentAs(c, now)), claimAt(now, 0))).settled).toEqual(new Set(held.slice(1)));
    // a few entries for each of the three, not the 2,000 once in flight (the slack: other sessions' reads flushed late)
    expect((await indexStat('idx_tup_read', sql`true`)) - before).toBeLessThan(3 * 15);
  });
});
