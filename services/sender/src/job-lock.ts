import type { RunForSend } from '@metronome/db';
import type { PaceFloors } from '@metronome/redis';
import type { JobDeps } from './deps.js';

/**
 * Runs `work` holding the run's account lock (one fan-out per account at a time), renewed while
 * it runs and released after, whatever `work` does. 'busy' when another job holds it. What
 * `work` sets in `floors` (the moment the account's next send may go, when its own sends went
 * out later than their slots) moves the shared pace in the call that releases the lock: one
 * Redis call ends the job's hold.
 */
export async function withAccountLock<T>(deps: JobDeps, run: RunForSend, work: (token: string, floors: PaceFloors) => Promise<T>): Promise<T | 'busy'> {
  const lock = await deps.lock.acquire(run.account.id, deps.settings.lockTtlMs);
  if (!lock.held) return 'busy';
  const renew = setInterval(() => {
    deps.lock.extend(run.account.id, lock.token, deps.settings.lockTtlMs).catch(() => undefined);
  }, Math.max(100, Math.floor(deps.settings.lockTtlMs / 3)));
  const floors: PaceFloors = { paceMs: 0, gapMs: 0 };
  try {
    return await work(lock.token, floors);
  } finally {
    clearInterval(renew);
    await deps.lock.release(run.account.id, lock.token, { nowMs: deps.clock.now(), ...floors }).catch((error: unknown) => {
      if (floors.paceMs > 0) deps.events.emit('pace:unsettled', { accountId: run.account.id, what: 'pace', error });
      if (floors.gapMs > 0) deps.events.emit('pace:unsettled', { accountId: run.account.id, what: 'gap', error });
    });
  }
}
