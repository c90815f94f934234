import { sql } from 'kysely';
import { createDb, TargetSendRepository, type ClaimRequest } from '@metronome/db';
import { ClaimStatements, type JobClaim } from '../../services/sender/src/claim-statements.js';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// A sender's concurrent jobs share their claim statements (claim-statements.ts): one statement
// settles and claims for several runs, each job's writes fenced by its own lease owner.

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

const sentAs = (chatId: string, now: number) => ({ chatId, at: new Date(now), latencyMs: 5, partsSent: 1, messageId: `m-${chatId}` });
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
});

test('a statement refused for one run fails that job alone; the others it carried still claim', async () => {
  const good = await runningRun(['a']);
  const bad = await runningRun(['a']);
  const claims = new ClaimStatements(h.deps.targets, h.clock);
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
  // As the single-run claim (sender-claims.test.ts): generic plans, entries counted by
  // PostgreSQL's index statistics. A join of the jobs with the run's targets planned as a scan
  // would read every target of every run.
  const runs = [await runningRun(Array.from({ length: 1000 }, (_, i) => `chat-${i}`)), await runningRun(Array.from({ length: 1000 }, (_, i) => `chat-${i}`))];
  const db = createDb({ url: h.tdb.url, max: 1 });
  try {
    await sql`set plan_cache_mode = force_generic_plan`.execute(db);
    const targets = new TargetSendRepository(db);
    const entriesRead = async () => {
      await sql`select pg_stat_force_next_flush()`.execute(db);
      const row = await sql<{ n: number }>`select coalesce(sum(idx_tup_read), 0)::int as n from pg_stat_user_indexes where relname = 'run_targets'`.execute(h.tdb.db);
      return row.rows[0]!.n;
    };
    const now = h.clock.now();
    const before = await entriesRead();
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
    // a few entries per run and statement, not the runs' 2,000 (the slack: other sessions' reads flushed late)
    expect((await entriesRead()) - before).toBeLessThan(5 * 2 * 20);
  } finally {
    await db.destroy();
  }
});
