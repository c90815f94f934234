import { runLoads, runStarts } from '../../services/sender/src/shared-statements.js';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// A sender's jobs that load or start their runs together share one statement
// (shared-statements.ts): each run loaded as loadRun alone; each started (queued → running) at
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
