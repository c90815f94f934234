import { jest } from '@jest/globals';
import type { RunForSend } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { withAccountLock } from './run-job.js';

// withAccountLock against a lock that records its calls: what the job's work leaves in its
// floors goes to the shared pace in the one call that releases the lock, and a release Redis
// does not answer is tried again until it does, or until the lock's TTL has ended it.

const TTL_MS = 30_000;

/** A lock whose first `failures` releases throw and whose renewals answer `renewals` in turn; the clock moves only when the job sleeps, or the test moves it. */
function fakeLock(failures = 0, renewals: boolean[] = []) {
  const calls: unknown[][] = [];
  const events: unknown[][] = [];
  const sleeps: number[] = [];
  let now = 1_000;
  let failed = 0;
  const deps = {
    clock: { now: () => now },
    settings: { lockTtlMs: TTL_MS },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    lock: {
      acquire: async (...a: unknown[]) => (calls.push(['acquire', ...a]), { held: true, token: 't1' }),
      extend: async (...a: unknown[]) => (calls.push(['extend', ...a, now]), renewals.shift() ?? true),
      release: async (...a: unknown[]) => {
        calls.push(['release', ...a]);
        if (failed++ < failures) throw new Error('redis away');
        return true;
      },
    },
    events: { emit: (...e: unknown[]) => events.push(e) },
  } as unknown as JobDeps;
  return { deps, calls, events, sleeps, advance: (ms: number) => (now += ms) };
}

/** Lets the release going on behind a job end: its sleeps are the fake clock's, so it ends within the microtasks before this. */
const settled = () => new Promise((r) => setImmediate(r));

const run = { account: { id: 'acc' } } as RunForSend;

test("the floors the job's work sets go with the lock's release, in one call", async () => {
  const { deps, calls } = fakeLock();
  const outcome = await withAccountLock(deps, run, async (token, floors) => {
    expect(token).toBe('t1');
    floors.paceMs = 5_000;
    floors.gapMs = 8_000;
    return 'sent';
  });
  expect(outcome).toBe('sent');
  expect(calls).toEqual([
    ['acquire', 'acc', TTL_MS],
    ['release', 'acc', 't1', { nowMs: 1_000, paceMs: 5_000, gapMs: 8_000 }],
  ]);
});

test('work that throws still releases the lock, with the floors it set before', async () => {
  const { deps, calls } = fakeLock();
  await expect(
    withAccountLock(deps, run, async (_token, floors) => {
      floors.paceMs = 5_000;
      throw new Error('lane failed');
    }),
  ).rejects.toThrow('lane failed');
  expect(calls.at(-1)).toEqual(['release', 'acc', 't1', { nowMs: 1_000, paceMs: 5_000, gapMs: 0 }]);
});

test('a release Redis did not answer is tried again, backing off, until it answers: the lock is not left to its TTL', async () => {
  const f = fakeLock(3);
  const outcome = await withAccountLock(f.deps, run, async (_token, floors) => {
    floors.paceMs = 5_000;
    return 'sent';
  });
  // the job ends at once; the release goes on behind it
  expect(outcome).toBe('sent');
  await settled();
  expect(f.sleeps).toEqual([250, 500, 1_000]);
  const releases = f.calls.filter(([name]) => name === 'release');
  // each try with the same token and floors, as of its own moment
  expect(releases.map((c) => c[3])).toEqual([1_000, 1_250, 1_750, 2_750].map((nowMs) => ({ nowMs, paceMs: 5_000, gapMs: 0 })));
  expect(releases.every((c) => c[2] === 't1')).toBe(true);
  expect(f.events).toEqual([['lock:released-late', { accountId: 'acc', afterMs: 1_750 }]]);
});

test("a release that never gets an answer stops once the lock's TTL has ended it, reporting each floor it could not set", async () => {
  const f = fakeLock(Infinity);
  await withAccountLock(f.deps, run, async (_token, floors) => {
    floors.paceMs = 5_000;
    floors.gapMs = 8_000;
  });
  await settled();
  // no try after the TTL (30 s after the job's end): 250 + 500 + 1000, then 2000 at most each
  expect(f.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(TTL_MS);
  expect(Math.max(...f.sleeps)).toBe(2_000);
  expect(f.events.map(([name, e]) => [name, (e as { what: string }).what])).toEqual([
    ['pace:unsettled', 'pace'],
    ['pace:unsettled', 'gap'],
  ]);
  const quiet = fakeLock(Infinity);
  await withAccountLock(quiet.deps, run, async () => undefined);
  await settled();
  expect(quiet.events).toEqual([]);
});

test('a renewal Redis confirms holds the lease a TTL from its request; one it refuses ends the lease at once', async () => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  try {
    const f = fakeLock(0, [true, false]);
    const renewEvery = TTL_MS / 3;
    await withAccountLock(f.deps, run, async (_token, _floors, lease) => {
      // acquired at 1_000: held until 1_000 + TTL less a sixth
      expect(lease.heldAt(25_999)).toBe(true);
      f.advance(renewEvery);
      await jest.advanceTimersByTimeAsync(renewEvery);
      expect(lease.heldAt(35_999)).toBe(true);
      expect(lease.heldAt(36_000)).toBe(false);
      f.advance(renewEvery);
      await jest.advanceTimersByTimeAsync(renewEvery);
      expect(lease.heldAt(f.deps.clock.now())).toBe(false);
    });
    expect(f.calls.filter(([name]) => name === 'extend')).toEqual([
      ['extend', 'acc', 't1', TTL_MS, 11_000],
      ['extend', 'acc', 't1', TTL_MS, 21_000],
    ]);
  } finally {
    jest.useRealTimers();
  }
});
