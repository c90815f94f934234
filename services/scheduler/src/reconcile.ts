import type { Clock } from '@metronome/core';
import type { ScheduleRepository } from '@metronome/db';
import type { Logger, Metrics } from '@metronome/observability';
import { runJobId, type RunQueue } from '@metronome/queue';

export interface ReconcileDeps {
  repo: ScheduleRepository;
  queue: RunQueue;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  pausedRunTtlMs: number;
}

// A run touched this recently may be between its commit and its enqueue: leave it alone.
const QUIET_MS = 5_000;
const BATCH = 1_000;

/**
 * PostgreSQL is the truth and Redis is disposable: every queued or running run must have a
 * live job. Re-adds the job of each run that has none (flushed Redis, lost enqueue, failed job)
 * under the run's current job id, so a job that still exists is never doubled. Also turns
 * expired in-flight leases into `unknown` and cancels runs paused longer than the TTL.
 */
export async function reconcile(deps: ReconcileDeps): Promise<{ requeued: number; expiredLeases: number; expiredPaused: number }> {
  const now = new Date(deps.clock.now());
  const expiredLeases = await deps.repo.expireLeases(now);
  const open = await deps.repo.openRuns(now, QUIET_MS, BATCH);
  const alive = await deps.queue.existing(open.filter((r) => r.jobId).map((r) => r.jobId!));
  const lost = open.filter((r) => !r.jobId || !alive.has(r.jobId));
  for (const run of lost) {
    // A new job step rather than the old id: a failed job's hash may linger under the old id,
    // and BullMQ would silently ignore a job added under it.
    const seq = run.jobSeq + 1;
    if (!(await deps.repo.handOverLostJob(run.id, run.jobId, seq, runJobId(run.id, seq), now))) continue;
    await deps.queue.enqueue(run.id, seq, Math.max(0, run.scheduledAt.getTime() - now.getTime()));
    deps.logger.warn({ runId: run.id, jobSeq: seq }, 'run had no live job in Redis: re-enqueued');
  }
  const expiredPaused = await deps.repo.expirePausedRuns(now, deps.pausedRunTtlMs);
  if (lost.length) deps.metrics.reconciled.inc({ kind: 'requeued' }, lost.length);
  if (expiredLeases) {
    deps.metrics.reconciled.inc({ kind: 'lease-expired' }, expiredLeases);
    deps.logger.warn({ targets: expiredLeases }, 'in-flight sends whose sender stopped: marked unknown');
  }
  if (expiredPaused) deps.logger.info({ runs: expiredPaused }, 'paused runs past PAUSED_RUN_TTL: cancelled');
  return { requeued: lost.length, expiredLeases, expiredPaused };
}
