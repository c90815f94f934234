import type { ManyReservation } from '@metronome/redis';
import type { JobDeps } from './deps.js';
import { PaceBatches, RESERVE_AHEAD_MS } from './job-pace.js';

// PaceBatches on a clock the test moves, against a pace that reserves as pace-reserve-many-3
// does (burst 1: consecutive slots one interval apart, each at most the longest wait ahead).

const INLINE_WAIT_MS = 250;

function fakePace(perMinute: number, inlineWaitMs = INLINE_WAIT_MS) {
  const interval = 60_000 / perMinute;
  let now = 0;
  let tat = 0;
  const calls: number[] = [];
  let refuse: ManyReservation | null = null;
  const deps = {
    clock: { now: () => now },
    settings: { maxInlineWaitMs: inlineWaitMs },
    pace: {
      reserveMany: async (
        _account: string,
        _token: string,
        at: number,
        _perMinute: number,
        _burst: number,
        maxWaitMs: number,
        count: number,
      ): Promise<ManyReservation> => {
        calls.push(count);
        if (refuse) return refuse;
        const waitsMs: number[] = [];
        for (let i = 0; i < count; i++) {
          const slot = Math.max(tat, at);
          if (slot - at > maxWaitMs) break;
          waitsMs.push(slot - at);
          tat = slot + interval;
        }
        return waitsMs.length > 0 ? { reserved: true, waitsMs } : { reserved: false, limitedBy: 'account', waitMs: tat - at };
      },
    },
  } as unknown as JobDeps;
  return {
    deps,
    calls,
    at: (t: number) => (now = t),
    tat: () => tat,
    refuseWith: (r: ManyReservation) => (refuse = r),
  };
}

const waits = async (batches: PaceBatches, n: number, maxWaitMs = 1_000) =>
  (await Promise.all(Array.from({ length: n }, () => batches.reserve(maxWaitMs)))).map((r) => (r.reserved ? r.waitMs : r));

test('a fast account: the call that reserves a lane slot reserves the slots due just after, and the next lanes take them without a call', async () => {
  const pace = fakePace(60_000); // one slot a millisecond
  const batches = new PaceBatches(pace.deps, 'acc', 'token', 60_000, 1, () => 50);
  expect(await waits(batches, 1)).toEqual([0]);
  expect(pace.calls).toEqual([1 + RESERVE_AHEAD_MS]);
  // ten lanes come back 5 ms later: the slots reserved ahead, in order, as their own calls would have reserved them
  pace.at(5);
  expect(await waits(batches, 10)).toEqual([0, 0, 0, 0, 0, 1, 2, 3, 4, 5]);
  expect(pace.calls).toEqual([1 + RESERVE_AHEAD_MS]);
  // the rest of the slots reserved ahead, then a call again
  expect(await waits(batches, 11)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  expect(pace.calls).toEqual([1 + RESERVE_AHEAD_MS, 1 + RESERVE_AHEAD_MS]);
});

test('lanes that asked while the call was out take the slots it reserved ahead', async () => {
  const pace = fakePace(60_000);
  const batches = new PaceBatches(pace.deps, 'acc', 'token', 60_000, 1, () => 50);
  // the first lane's call goes out at once; the other nine wait for it, then are served from what it reserved
  expect(await waits(batches, 10)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  expect(pace.calls).toEqual([1 + RESERVE_AHEAD_MS]);
});

test('nothing is reserved ahead beyond what the job may still send', async () => {
  const pace = fakePace(60_000);
  let spare = 3;
  const batches = new PaceBatches(pace.deps, 'acc', 'token', 60_000, 1, () => spare);
  await waits(batches, 1);
  expect(pace.calls).toEqual([4]);
  spare = 0;
  await waits(batches, 4);
  expect(pace.calls).toEqual([4, 1]);
  // the account is held back only to the slot after the last one reserved
  expect(pace.tat()).toBe(5);
});

test('an account slower than one send per RESERVE_AHEAD_MS is reserved exactly as asked', async () => {
  const perMinute = 60_000 / (RESERVE_AHEAD_MS + 1);
  const pace = fakePace(perMinute);
  const batches = new PaceBatches(pace.deps, 'acc', 'token', perMinute, 1, () => 50);
  expect(await waits(batches, 3)).toEqual([0, RESERVE_AHEAD_MS + 1, 2 * (RESERVE_AHEAD_MS + 1)]);
  // the first lane alone, the two that asked meanwhile together: nothing ahead
  expect(pace.calls).toEqual([1, 2]);
});

test('a sender that waits in-process less than RESERVE_AHEAD_MS reserves exactly as asked: it would drop what it reserved ahead', async () => {
  const pace = fakePace(60_000, RESERVE_AHEAD_MS - 1);
  const batches = new PaceBatches(pace.deps, 'acc', 'token', 60_000, 1, () => 50);
  await waits(batches, 1);
  expect(pace.calls).toEqual([1]);
});

test('a slot reserved ahead is taken at most SENDER_MAX_INLINE_WAIT_MS after the call that checked the lock', async () => {
  const pace = fakePace(60_000);
  const batches = new PaceBatches(pace.deps, 'acc', 'token', 60_000, 1, () => 50);
  await waits(batches, 1);
  pace.at(INLINE_WAIT_MS);
  expect(await waits(batches, 1)).toEqual([0]);
  expect(pace.calls).toHaveLength(1);
  pace.at(INLINE_WAIT_MS + 1);
  await waits(batches, 1);
  expect(pace.calls).toHaveLength(2);
});

test('a slot reserved ahead further than a lane waits is left to a lane that waits longer', async () => {
  const pace = fakePace(60_000);
  const batches = new PaceBatches(pace.deps, 'acc', 'token', 60_000, 1, () => 50);
  await waits(batches, 1);
  // slots 1..20 ms ahead: a lane that waits at most 0 ms takes none of them and calls
  const [lone] = await waits(batches, 1, 0);
  expect(lone).toEqual({ reserved: false, limitedBy: 'account', waitMs: 21 });
  expect(await waits(batches, 1, 5)).toEqual([1]);
});

test('a lost lock reaches every lane of the call and drops what was reserved ahead', async () => {
  const pace = fakePace(60_000);
  const batches = new PaceBatches(pace.deps, 'acc', 'token', 60_000, 1, () => 50);
  await waits(batches, 1);
  pace.refuseWith({ reserved: false, lockLost: true });
  // a lane that waits at most 0 ms finds nothing ahead it may take, calls, and the lock is gone
  expect(await waits(batches, 2, 0)).toEqual([
    { reserved: false, lockLost: true },
    { reserved: false, lockLost: true },
  ]);
  expect(await waits(batches, 1)).toEqual([{ reserved: false, lockLost: true }]);
});
