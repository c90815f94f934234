import { RunStarts } from '../../services/sender/src/run-starts.js';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// A sender's jobs that start their runs together share one statement (run-starts.ts): each run
// queued → running at its own job's moment, its suppressed chats skipped, as markRunning alone.

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
  const starts = new RunStarts(repo, h.clock, 1);
  const at = (i: number) => new Date(h.clock.now() - 1000 * i);
  expect(await Promise.all(runs.map((id, i) => starts.start(id, at(i))))).toEqual([true, true, true]);
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
  expect(await Promise.all([starts.start(runs[0]!, later), starts.start(runs[2]!, later)])).toEqual([true, false]);
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
  const starts = new RunStarts(repo, h.clock, 1);
  const first = starts.start(runId, new Date(h.clock.now()));
  const [ok, bad] = await Promise.allSettled([starts.start(runId, new Date(h.clock.now())), starts.start('not-a-uuid', new Date(h.clock.now()))]);
  expect(await first).toBe(true);
  expect(ok).toEqual({ status: 'fulfilled', value: true });
  expect(bad.status).toBe('rejected');
  // the first alone, the pair together (refused), then each of the pair alone
  expect(calls).toBe(4);
});
