import { jobCloses, partWrites, runLoads, runStarts } from '../../services/sender/src/statements.js';
import type { CloseRequest, PartWrite } from '@metronome/db';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// A sender's jobs that load or start their runs together share one statement
// (statements.ts): each run loaded as loadRun alone; each started (queued → running) at
// its own job's moment, its suppressed chats skipped, as markRunning alone.

let h: SenderHarness;
beforeEach(async () => {
  h = await startSenderHarness();
});
afterEach(async () => {
  await h.close();
});

const row = (runId: string) => h.tdb.db.selectFrom('runs').select(['status', 'started_at']).where('id', '=', runId).executeTakeFirstOrThrow();

test('starts that come while one is out share the next statement, each run stamped with its own moment and its suppressed chats skipped', async () => {
  const { tenantId, accountId } = await h.seedAccount();
  const parts = [{ type: 'text' as const, text: 'hi' }];
  const runs = await Promise.all([0, 1, 2].map(() => h.seedRun({ tenantId, accountId, targets: ['a', 'b'], parts })));
  await h.tdb.db.insertInto('account_suppressions').values({ account_id: accountId, chat_id: 'b', reason: 'operator' }).execute();
  // one statement out at a time: the first start goes alone, the two asked meanwhile together
  const sizes: number[] = [];
  const repo = {
    markRunningMany: (starts: { runId: string; at: Date }[], now: Date) => {
      sizes.push(starts.length);
      return h.deps.repo.runs.markRunningMany(starts, now);
    },
  };
  const starts = runStarts(repo, h.clock, 1);
  const at = (i: number) => new Date(h.clock.now() - 1000 * i);
  expect(await Promise.all(runs.map((id, i) => starts.ask({ runId: id, at: at(i) })))).toEqual([true, true, true]);
  expect(sizes).toEqual([1, 2]);
  for (const [i, id] of runs.entries()) {
    expect(await row(id)).toEqual({ status: 'running', started_at: at(i) });
    expect((await h.targets(id)).map((t) => [t.chat_id, t.status, t.error_code])).toEqual([
      ['a', 'pending', null],
      ['b', 'skipped', 'suppressed'],
    ]);
  }
  // started once: a later start keeps started_at; a run no longer open is not started
  await h.deps.repo.runs.pause(runs[1]!, 'operator', null, new Date(h.clock.now()));
  await h.deps.repo.runs.finish(runs[2]!, 'failed', null, new Date(h.clock.now()));
  const later = new Date(h.clock.now() + 5000);
  expect(await Promise.all([starts.ask({ runId: runs[0]!, at: later }), starts.ask({ runId: runs[2]!, at: later })])).toEqual([true, false]);
  expect(await row(runs[0]!)).toEqual({ status: 'running', started_at: at(0) });
  expect((await row(runs[2]!)).status).toBe('failed');
});

test("a statement that fails on one run's data is tried again for each run alone", async () => {
  const { tenantId, accountId } = await h.seedAccount();
  const runId = await h.seedRun({ tenantId, accountId, targets: ['a'], parts: [{ type: 'text', text: 'hi' }] });
  let calls = 0;
  const repo = {
    markRunningMany: (starts: { runId: string; at: Date }[], now: Date) => {
      calls++;
      // a run id PostgreSQL refuses (not a uuid) fails the whole statement it is in
      return h.deps.repo.runs.markRunningMany(starts, now);
    },
  };
  const starts = runStarts(repo, h.clock, 1);
  const first = starts.ask({ runId, at: new Date(h.clock.now()) });
  const [ok, bad] = await Promise.allSettled([
    starts.ask({ runId, at: new Date(h.clock.now()) }),
    starts.ask({ runId: 'not-a-uuid', at: new Date(h.clock.now()) }),
  ]);
  expect(await first).toBe(true);
  expect(ok).toEqual({ status: 'fulfilled', value: true });
  expect(bad.status).toBe('rejected');
  // the first alone, the pair together (refused), then each of the pair alone
  expect(calls).toBe(4);
});

test('loads that come while one is out share the next statement, each answered with its own run as loadRun reads it', async () => {
  const { tenantId, accountId } = await h.seedAccount();
  const parts = [{ type: 'text' as const, text: 'hi' }];
  const runs = [
    await h.seedRun({ tenantId, accountId, targets: ['a', 'b', 'c'], parts }),
    await h.seedRun({ tenantId, accountId, targets: ['d'], parts }),
    await h.seedRun({ tenantId, accountId, targets: ['e', 'f'], parts }),
  ];
  const sizes: number[] = [];
  const repo = {
    loadRunMany: (runIds: string[], dueLimit: number) => {
      sizes.push(runIds.length);
      return h.deps.repo.runs.loadRunMany(runIds, dueLimit);
    },
  };
  const loads = runLoads(repo, 2, 1);
  const missing = '00000000-0000-4000-8000-000000000000';
  // a run that is not there answers null, in its place
  const loaded = await Promise.all([...runs, missing].map((id) => loads.ask(id)));
  expect(sizes).toEqual([1, 3]);
  expect(loaded.map((r) => r?.runId ?? null)).toEqual([...runs, null]);
  for (const [i, id] of runs.entries()) expect(loaded[i]).toEqual(await h.deps.repo.runs.loadRun(id, 2));
  // at most `dueLimit` due times each
  expect(loaded.map((r) => r?.dueTimes.length ?? null)).toEqual([2, 1, 2, null]);
});

test("jobs' last writes that come while one is out share the next statement: each its deliveries, its account's health, its counts and its finish", async () => {
  const parts = [{ type: 'text' as const, text: 'hi' }];
  const now = h.clock.now();
  // three runs on three accounts, each with its targets held by its own job
  const jobs = await Promise.all(
    [['a', 'b'], ['c'], ['d', 'e']].map(async (targets, i) => {
      const { tenantId, accountId } = await h.seedAccount();
      const runId = await h.seedRun({ tenantId, accountId, targets, parts });
      await h.deps.repo.runs.markRunning(runId, new Date(now));
      const owner = `job-${i}`;
      const [claim] = await h.deps.targets.settleSentAndClaimMany(
        [{ runId, owner, sent: [], leaseUntil: new Date(now + 60_000), firstSendKnown: false, limit: targets.length }],
        new Date(now),
        true,
      );
      return { runId, owner, accountId, held: claim!.claimed.map((t) => t.chatId) };
    }),
  );
  const sent = (chatId: string) => ({ chatId, at: new Date(now), latencyMs: 5, partsSent: 1, messageId: `m-${chatId}` });
  const sizes: number[] = [];
  const repo = {
    settleSentAndCountMany: (closes: CloseRequest[], at: Date, finish: boolean) => {
      sizes.push(closes.length);
      return h.deps.targets.settleSentAndCountMany(closes, at, finish);
    },
  };
  const closes = jobCloses(repo, h.clock, 1);
  const health = (accountId: string, outcomes: string) => ({
    accountId,
    write: { floodWaits: [new Date(now - 1000)], outcomes, paceFactor: 0.5, paceSince: null },
  });
  const results = await Promise.all([
    // every target sent: finished; its account's health written
    closes.ask({ runId: jobs[0]!.runId, owner: jobs[0]!.owner, sent: jobs[0]!.held.map(sent), health: health(jobs[0]!.accountId, 'ss') }),
    // another owner's answer is not written: counted, not finished
    closes.ask({ runId: jobs[1]!.runId, owner: 'someone-else', sent: [sent('c')], health: null }),
    // one of two sent, the other still held: counted, not finished; health written
    closes.ask({ runId: jobs[2]!.runId, owner: jobs[2]!.owner, sent: [sent('d')], health: health(jobs[2]!.accountId, 's') }),
  ]);
  expect(sizes).toEqual([1, 2]);
  expect(results.map((r) => [[...r.settled], r.finished])).toEqual([
    [['a', 'b'], true],
    [[], false],
    [['d'], false],
  ]);
  expect(results.map((r) => r.progress)).toMatchObject([
    { total: 2, sent: 2, inFlight: 0 },
    { total: 1, sent: 0, inFlight: 1 },
    { total: 2, sent: 1, inFlight: 1 },
  ]);
  expect((await h.run(jobs[0]!.runId)).status).toBe('success');
  expect((await h.run(jobs[1]!.runId)).status).toBe('running');
  expect((await h.run(jobs[2]!.runId)).status).toBe('running');
  const accounts = await h.tdb.db
    .selectFrom('accounts')
    .select(['id', 'send_outcomes', 'pace_factor', 'flood_waits'])
    .where(
      'id',
      'in',
      jobs.map((j) => j.accountId),
    )
    .execute();
  const byId = new Map(accounts.map((a) => [a.id, a]));
  expect(byId.get(jobs[0]!.accountId)).toMatchObject({ send_outcomes: 'ss', pace_factor: 0.5, flood_waits: [new Date(now - 1000)] });
  expect(byId.get(jobs[1]!.accountId)).toMatchObject({ send_outcomes: '', pace_factor: 1, flood_waits: [] });
  expect(byId.get(jobs[2]!.accountId)).toMatchObject({ send_outcomes: 's', pace_factor: 0.5 });
});

test("jobs' part writes that come while one is out share the next statement, each fenced by its own lease: a stamp, a waiting again, a delivered part", async () => {
  const now = h.clock.now();
  const parts = [
    { type: 'text' as const, text: 'one' },
    { type: 'text' as const, text: 'two' },
  ];
  const jobs = await Promise.all(
    [['a', 'b'], ['c']].map(async (targets, i) => {
      const { tenantId, accountId } = await h.seedAccount();
      const runId = await h.seedRun({ tenantId, accountId, targets, parts });
      await h.deps.repo.runs.markRunning(runId, new Date(now));
      const owner = `job-${i}`;
      await h.deps.targets.settleSentAndClaimMany(
        [{ runId, owner, sent: [], leaseUntil: new Date(now + 60_000), firstSendKnown: true, limit: targets.length }],
        new Date(now),
        true,
      );
      return { runId, owner };
    }),
  );
  const [one, two] = jobs as [(typeof jobs)[0], (typeof jobs)[0]];
  const sizes: number[] = [];
  const repo = {
    writePartsMany: (writes: PartWrite[], at: Date) => {
      sizes.push(writes.length);
      return h.deps.targets.writePartsMany(writes, at);
    },
  };
  const writes = partWrites(repo, h.clock, 1);
  const began = new Date(now - 500);
  const first = writes.ask({ runId: one.runId, target: { chatId: 'a' }, owner: one.owner, startedAt: began });
  const answers = await Promise.all([
    first,
    writes.ask({ runId: one.runId, target: { chatId: 'b' }, owner: one.owner, partsSent: 1, messageId: 'm-b1' }),
    writes.ask({ runId: two.runId, target: { chatId: 'c' }, owner: two.owner, startedAt: null }),
    // another owner's write changes nothing
    writes.ask({ runId: two.runId, target: { chatId: 'c' }, owner: 'someone-else', partsSent: 2, messageId: 'm-c2' }),
  ]);
  expect(sizes).toEqual([1, 3]);
  expect(answers).toEqual([true, true, true, false]);
  const rows = async (runId: string) =>
    (
      await h.tdb.db
        .selectFrom('run_targets')
        .select(['chat_id', 'send_started_at', 'parts_sent', 'message_ids'])
        .where('run_id', '=', runId)
        .orderBy('chat_id')
        .execute()
    ).map((t) => ({ chat: t.chat_id, startedAt: t.send_started_at, partsSent: t.parts_sent, messageIds: t.message_ids }));
  expect(await rows(one.runId)).toEqual([
    { chat: 'a', startedAt: began, partsSent: 0, messageIds: [] },
    { chat: 'b', startedAt: null, partsSent: 1, messageIds: ['m-b1'] },
  ]);
  expect(await rows(two.runId)).toEqual([{ chat: 'c', startedAt: null, partsSent: 0, messageIds: [] }]);
});
