import type { Clock } from '@metronome/core';
import type { NotDelivering, NotDeliveringSettings, ScheduleRepository } from '@metronome/db';
import type { Logger, Metrics } from '@metronome/observability';
import type { RunQueue } from '@metronome/queue';
import { eventsOf } from './reporting-events.js';
import type { SchedulerEvents } from './scheduler-events.js';

export interface ReconcileDeps {
  repo: ScheduleRepository;
  queue: RunQueue;
  clock: Clock;
  /** what the reconciler reports; subscribers make the metrics and log lines */
  events?: SchedulerEvents;
  /** the subscribers' logger and metrics, for deps built without `events` (reporting-events.ts) */
  logger: Logger;
  metrics: Metrics;
  pausedRunTtlMs: number;
  /** accounts whose sends get no delivery receipt (NOT_DELIVERING_*): absent, none are judged */
  notDelivering?: { repo: { mark(now: Date, s: NotDeliveringSettings): Promise<NotDelivering[]> }; settings: NotDeliveringSettings };
}

const PAGE = 1_000;

/**
 * PostgreSQL is the truth and Redis is disposable: every queued or running run must have a
 * live job. Re-adds the job of each run that has none (flushed Redis, lost enqueue, failed job)
 * under the run's next job id, so a job that still exists is never doubled. Every open run is
 * checked on every pass, so after Redis comes back empty each one has a job again within one
 * tick. Also turns expired in-flight leases into `unknown`, cancels runs paused longer than
 * the TTL, and ends automatic coolings that are due.
 *
 * No run is left out for being touched lately. A run can be between its commit and its
 * enqueue (a continuation, a resume): it may then be handed a new job here although its own
 * job is about to arrive. That costs one job that does nothing, because the hand-over is
 * fenced: the new job step is written only if the run is still at the step found without a
 * job, and a job whose id the run no longer names stops at once (`stale-message`). Waiting a quiet period
 * instead would leave every run that moved lately without a job for that long after Redis
 * loses everything.
 */
export async function reconcile(deps: ReconcileDeps): Promise<{ requeued: number; expiredLeases: number; expiredPaused: number }> {
  const now = new Date(deps.clock.now());
  const events = eventsOf(deps);
  const expiredLeases = await deps.repo.expireLeases(now);
  let requeued = 0;
  for (let after: string | null = null; ; ) {
    const open = await deps.repo.openRuns(after, PAGE);
    if (open.length === 0) break;
    after = open[open.length - 1]!.id;
    const alive = await deps.queue.existing(open.filter((r) => r.jobId).map((r) => r.jobId!));
    // A new job step rather than the old id: a failed job's hash may linger under the old id, and BullMQ would silently ignore a job added under it.
    const lost = open.filter((r) => !r.jobId || !alive.has(r.jobId));
    const scheduledAt = new Map(lost.map((r) => [r.id, r.scheduledAt]));
    const moved = await deps.repo.handOverLostJobs(
      lost.map((r) => ({ runId: r.id, fromJobSeq: r.jobSeq })),
      now,
    );
    await deps.queue.enqueueMany(
      moved.map((m) => ({ runId: m.runId, seq: m.jobSeq, delayMs: Math.max(0, scheduledAt.get(m.runId)!.getTime() - now.getTime()) })),
    );
    for (const m of moved) events.emit('run:requeued', { runId: m.runId, jobSeq: m.jobSeq });
    requeued += moved.length;
    if (open.length < PAGE) break;
  }
  const expiredPaused = await deps.repo.expirePausedRuns(now, deps.pausedRunTtlMs);
  // Automatic cooling ends here, in one place, at its `until`: the account is active again
  // (its `account` event and webhook follow from the status change), and the runs that waited
  // for it go on with their next job.
  const cooled = await deps.repo.endDueCoolings(now);
  for (const a of cooled) events.emit('account:cooling-ended', { accountId: a.id, platform: a.platform });
  // An account whose sends stopped getting delivery receipts cools (not_delivering): its runs wait.
  if (deps.notDelivering) {
    for (const a of await deps.notDelivering.repo.mark(now, deps.notDelivering.settings))
      events.emit('account:not-delivering', { accountId: a.id, platform: a.platform, sends: a.sends });
  }
  events.emit('reconcile:done', { requeued, expiredLeases, expiredPaused });
  return { requeued, expiredLeases, expiredPaused };
}
