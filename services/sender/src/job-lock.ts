import type { RunForSend } from '@metronome/db';
import type { JobDeps } from './deps.js';

/**
 * Runs `work` holding the run's account lock (one fan-out per account at a time), renewed while
 * it runs and released after, whatever `work` does. 'busy' when another job holds it.
 */
export async function withAccountLock<T>(deps: JobDeps, run: RunForSend, work: (token: string) => Promise<T>): Promise<T | 'busy'> {
  const lock = await deps.lock.acquire(run.account.id, deps.settings.lockTtlMs);
  if (!lock.held) return 'busy';
  const renew = setInterval(() => {
    deps.lock.extend(run.account.id, lock.token, deps.settings.lockTtlMs).catch(() => undefined);
  }, Math.max(100, Math.floor(deps.settings.lockTtlMs / 3)));
  try {
    return await work(lock.token);
  } finally {
    clearInterval(renew);
    await deps.lock.release(run.account.id, lock.token).catch(() => undefined);
  }
}
