import type { RunForSend } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { withAccountLock } from './run-job.js';

// withAccountLock against a lock that records its calls: what the job's work leaves in its
// floors goes to the shared pace in the one call that releases the lock.

function fakeLock(releaseFails = false) {
  const calls: unknown[][] = [];
  const events: unknown[][] = [];
  const deps = {
    clock: { now: () => 1_000 },
    settings: { lockTtlMs: 30_000 },
    lock: {
      acquire: async (...a: unknown[]) => (calls.push(['acquire', ...a]), { held: true, token: 't1' }),
      extend: async () => true,
      release: async (...a: unknown[]) => {
        calls.push(['release', ...a]);
        if (releaseFails) throw new Error('redis away');
        return true;
      },
    },
    events: { emit: (...e: unknown[]) => events.push(e) },
  } as unknown as JobDeps;
  return { deps, calls, events };
}

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
    ['acquire', 'acc', 30_000],
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

test('a release that fails reports each floor it could not set, and nothing when there was none', async () => {
  const failing = fakeLock(true);
  await withAccountLock(failing.deps, run, async (_token, floors) => {
    floors.paceMs = 5_000;
    floors.gapMs = 8_000;
  });
  expect(failing.events.map(([name, e]) => [name, (e as { what: string }).what])).toEqual([
    ['pace:unsettled', 'pace'],
    ['pace:unsettled', 'gap'],
  ]);
  const quiet = fakeLock(true);
  await withAccountLock(quiet.deps, run, async () => undefined);
  expect(quiet.events).toEqual([]);
});
