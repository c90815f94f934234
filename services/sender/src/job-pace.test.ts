import type { RunForSend } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { JobPace } from './job-pace.js';
import type { JobStop } from './job-pace.js';

// JobPace's write spacing on a virtual clock: what matters is when each lane is let go to write.

const INTERVAL = 100;

/** A clock that only moves when the test runs its next timer. */
function virtualTime() {
  let now = 0;
  const timers: { at: number; wake: () => void }[] = [];
  const deps = {
    clock: { now: () => now },
    sleep: (ms: number) => new Promise<void>((wake) => timers.push({ at: now + ms, wake })),
    settings: { rateBurst: 1, maxInlineWaitMs: 0, maxGateWaitMs: 0, chatPacePerMinute: {} },
  } as unknown as JobDeps;
  /** Runs every timer, earliest first, letting the woken lanes go on before the next. */
  const runAll = async () => {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (timers.length === 0) return;
      timers.sort((a, b) => a.at - b.at);
      const next = timers.shift()!;
      now = Math.max(now, next.at);
      next.wake();
    }
  };
  return { deps, runAll, at: (t: number) => (now = t) };
}

const run = { account: { id: 'a', platform: 'http', sendDelaySeconds: null, hourlyCap: null, dailyCap: null, warmup: null } } as unknown as RunForSend;

/** A job's pace at 600 a minute (one write every 100 ms); `wrote`: a first write at 0 already went. */
async function pace(deps: JobDeps, wrote: boolean, reportsWrites = false): Promise<JobPace> {
  const p = new JobPace(deps, run, 'token', { reportsWrites } as never, {} as JobStop, { perMinute: 60_000 / INTERVAL, lanes: 1, spare: () => 0 });
  if (wrote) (await p.spaceWrite()).ended();
  return p;
}

test('lanes released together write one interval apart, however many came at once', async () => {
  const { deps, runAll } = virtualTime();
  const ctx = await pace(deps, true);
  const written: number[] = [];
  const lanes = [1, 2, 3].map(() => ctx.spaceWrite().then(() => written.push(deps.clock.now())));
  await runAll();
  await Promise.all(lanes);
  expect(written).toEqual([100, 200, 300]);
});

test('the first write of a job goes at once; the next keeps the interval', async () => {
  const { deps, runAll } = virtualTime();
  const ctx = await pace(deps, false);
  const written: number[] = [];
  const lanes = [1, 2].map(() => ctx.spaceWrite().then(() => written.push(deps.clock.now())));
  await runAll();
  await Promise.all(lanes);
  expect(written).toEqual([0, 100]);
});

test('a lane that comes after the interval has passed writes at once', async () => {
  const { deps, at, runAll } = virtualTime();
  const ctx = await pace(deps, true);
  at(250);
  await ctx.spaceWrite();
  expect(deps.clock.now()).toBe(250);
  // the next keeps the interval from that write
  const next = ctx.spaceWrite().then(() => deps.clock.now());
  await runAll();
  expect(await next).toBe(350);
});

test('a request that leaves late holds the next until one interval after it left, not after it was let go', async () => {
  const { deps, runAll, at } = virtualTime();
  const ctx = await pace(deps, false, true);
  const first = await ctx.spaceWrite();
  expect(deps.clock.now()).toBe(0);
  // the next lane is let go only once the first request left: 70 ms late (a new connection), then one interval
  const written: number[] = [];
  const next = ctx.spaceWrite().then((turn) => {
    written.push(deps.clock.now());
    turn.ended();
  });
  await new Promise((r) => setImmediate(r));
  expect(written).toEqual([]);
  at(70);
  first.onWritten?.();
  first.ended();
  await runAll();
  await next;
  expect(written).toEqual([170]);
});

test('a send that ends without its request leaving lets the next go on the interval', async () => {
  const { deps, runAll } = virtualTime();
  const ctx = await pace(deps, false, true);
  const first = await ctx.spaceWrite();
  const written: number[] = [];
  const next = ctx.spaceWrite().then(() => written.push(deps.clock.now()));
  first.ended();
  await runAll();
  await next;
  expect(written).toEqual([100]);
});

test('a transport that cannot tell when its request left does not hold the next lane', async () => {
  const { deps, runAll } = virtualTime();
  const ctx = await pace(deps, false, false);
  const first = await ctx.spaceWrite();
  expect(first.onWritten).toBeUndefined();
  const written: number[] = [];
  const next = ctx.spaceWrite().then(() => written.push(deps.clock.now()));
  await runAll();
  await next;
  expect(written).toEqual([100]);
});
