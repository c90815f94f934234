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

const context = (lastWrite: number | null): LaneContext =>
  ({
    sent: { tat: lastWrite === null ? 0 : lastWrite + INTERVAL },
    intervalMs: INTERVAL,
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
