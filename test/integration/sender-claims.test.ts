import { ClaimStatements, type JobClaim } from '../../services/sender/src/statements.js';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { claimAt, claimHelpers, sentAs, settleSentAndClaim } from './sender-claims.fixture.js';

// The fused claim (`settleSentAndClaimMany`) on real PostgreSQL: one round trip, and the lease
// still fences it; with a limit of 0 it only writes deliveries (answers no claim came to carry).
// What its statements read: sender-claim-reads.test.ts.

let h: SenderHarness;
beforeEach(async () => {
  h = await startSenderHarness();
});
afterEach(async () => {
  await h.close();
});
const { runningRun, request } = claimHelpers(() => h);

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
    finished: false,
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

test("the job's last write finishes the run as a success when every target is then sent, and only then", async () => {
  const status = async (runId: string) => (await h.run(runId)).status;
  const now = h.clock.now();
  // b still pending: not counted, not finished (one pending run is counted as no targets at all)
  const pending = await runningRun(['a', 'b']);
  await settleSentAndClaim(h.deps.targets, pending, 'owner-1', [], claimAt(now, 1));
  expect((await h.deps.targets.settleSentAndCount(pending, 'owner-1', [sentAs('a', now)], new Date(now), null, true)).finished).toBe(false);
  expect(await status(pending)).toBe('running');
  // b still in flight (another lane's): counted, not finished
  const inFlight = await runningRun(['a', 'b']);
  await settleSentAndClaim(h.deps.targets, inFlight, 'owner-1', [], claimAt(now, 2));
  const held = await h.deps.targets.settleSentAndCount(inFlight, 'owner-1', [sentAs('a', now)], new Date(now), null, true);
  expect([held.finished, held.progress]).toMatchObject([false, { sent: 1, inFlight: 1 }]);
  expect(await status(inFlight)).toBe('running');
  // b failed: complete but not a success, left to the sender's own finish (its summary)
  await h.deps.targets.settle(inFlight, { chatId: 'b' }, 'owner-1', { status: 'failed', errorCode: 'x', errorMessage: 'x', countAttempt: true }, new Date(now));
  expect((await h.deps.targets.settleSentAndCount(inFlight, 'owner-1', [], new Date(now), null, true)).finished).toBe(false);
  expect(await status(inFlight)).toBe('running');
  // every target sent: finished in the same statement, as the sender's finish writes it
  const done = await runningRun(['a', 'b']);
  await settleSentAndClaim(h.deps.targets, done, 'owner-1', [], claimAt(now, 2));
  const last = await h.deps.targets.settleSentAndCount(done, 'owner-1', [sentAs('a', now), sentAs('b', now)], new Date(now), null, true);
  expect([last.finished, last.progress]).toMatchObject([true, { total: 2, sent: 2 }]);
  expect(await h.run(done)).toMatchObject({ status: 'success', error_summary: null });
  const row = await h.tdb.db.selectFrom('runs').select(['finished_at']).where('id', '=', done).executeTakeFirstOrThrow();
  expect(row.finished_at).toEqual(new Date(now));
  // without `finish`, as the plain count reads it
  const plain = await runningRun(['a']);
  await settleSentAndClaim(h.deps.targets, plain, 'owner-1', [], claimAt(now, 1));
  expect((await h.deps.targets.settleSentAndCount(plain, 'owner-1', [sentAs('a', now)], new Date(now))).finished).toBe(false);
  expect(await status(plain)).toBe('running');
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

// A sender's concurrent jobs share their claim statements (statements.ts): one statement
// settles and claims for several runs, each job's writes fenced by its own lease owner.

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
  // one statement out at a time here (a sender has two: libs/core group-commit.test.ts tests that rule)
  const claims = new ClaimStatements(targets, h.clock, 1);
  const job = (runId: string, limit: number): JobClaim => ({ runId, owner: `job-${runId}`, sent: [], leaseMs: 60_000, firstSendKnown: false, limit });
  const results = await Promise.all([claims.claim(true, job(runs[0]!, 1)), claims.claim(true, job(runs[1]!, 2)), claims.claim(true, job(runs[2]!, 1))]);
  expect(statements).toEqual([[runs[0]], [runs[1], runs[2]]]);
  expect(results.map((r) => r.claimed.map((t) => t.chatId))).toEqual([['a'], ['a', 'b'], ['a']]);
  // each job's leases run from its own statement's moment
  expect(results.every((r) => r.at === h.clock.now())).toBe(true);
  // a job's answers held too long for a claim to carry (a limit of 0) ride with another job's claim
  const out = claims.claim(true, job(runs[2]!, 1));
  const [written, next] = await Promise.all([
    claims.claim(true, { ...job(runs[0]!, 0), sent: [sentAs('a', h.clock.now())] }),
    claims.claim(true, job(runs[2]!, 1)),
  ]);
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
