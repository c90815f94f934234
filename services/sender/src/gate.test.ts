import type { JobDeps } from './deps.js';
import type { LaneContext } from './lane-context.js';
import { spaceWrite } from './gate.js';

// spaceWrite on a virtual clock: what matters is when each lane is let go to write.

const INTERVAL = 100;

/** A clock that only moves when the test runs its next timer. */
function virtualTime() {
  let now = 0;
  const timers: { at: number; wake: () => void }[] = [];
  const deps = {
    clock: { now: () => now },
    sleep: (ms: number) => new Promise<void>((wake) => timers.push({ at: now + ms, wake })),
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

const context = (lastWrite: number | null, reportsWrites = false): LaneContext =>
  ({
    transport: { reportsWrites },
    writing: Promise.resolve(),
    leftAt: 0,
    sent: { tat: lastWrite === null ? 0 : lastWrite + INTERVAL },
    configuredIntervalMs: INTERVAL,
    burst: 1,
    limits: null,
    lastWriteAt: lastWrite ?? 0,
  }) as unknown as LaneContext;

test('lanes released together write one interval apart, however many came at once', async () => {
  const { deps, runAll } = virtualTime();
  const ctx = context(0);
  const written: number[] = [];
  const lanes = [1, 2, 3].map(() => spaceWrite(deps, ctx).then(() => written.push(deps.clock.now())));
  await runAll();
  await Promise.all(lanes);
  expect(written).toEqual([100, 200, 300]);
});

test('the first write of a job goes at once; the next keeps the interval', async () => {
  const { deps, runAll } = virtualTime();
  const ctx = context(null);
  const written: number[] = [];
  const lanes = [1, 2].map(() => spaceWrite(deps, ctx).then(() => written.push(deps.clock.now())));
  await runAll();
  await Promise.all(lanes);
  expect(written).toEqual([0, 100]);
});

test('a lane that comes after the interval has passed writes at once', async () => {
  const { deps, at } = virtualTime();
  const ctx = context(0);
  at(250);
  await spaceWrite(deps, ctx);
  expect(ctx.lastWriteAt).toBe(250);
  expect(ctx.sent.tat).toBe(350);
});

test('a request that leaves late holds the next until one interval after it left, not after it was let go', async () => {
  const { deps, runAll, at } = virtualTime();
  const ctx = context(null, true);
  const first = await spaceWrite(deps, ctx);
  expect(deps.clock.now()).toBe(0);
  // the next lane is let go only once the first request left: 70 ms late (a new connection), then one interval
  const written: number[] = [];
  const next = spaceWrite(deps, ctx).then((turn) => {
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
  const ctx = context(null, true);
  const first = await spaceWrite(deps, ctx);
  const written: number[] = [];
  const next = spaceWrite(deps, ctx).then(() => written.push(deps.clock.now()));
  first.ended();
  await runAll();
  await next;
  expect(written).toEqual([100]);
});

test('a transport that cannot tell when its request left does not hold the next lane', async () => {
  const { deps, runAll } = virtualTime();
  const ctx = context(null, false);
  const first = await spaceWrite(deps, ctx);
  expect(first.onWritten).toBeUndefined();
  const written: number[] = [];
  const next = spaceWrite(deps, ctx).then(() => written.push(deps.clock.now()));
  await runAll();
  await next;
  expect(written).toEqual([100]);
});
