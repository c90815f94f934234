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
  events?: SchedulerEvents;
  /** for deps built without `events` (reporting-events.ts) */
  logger: Logger;
  metrics: Metrics;
  pausedRunTtlMs: number;
  /** accounts whose sends get no delivery receipt (NOT_DELIVERING_*); absent: none judged */
  notDelivering?: { repo: { mark(now: Date, s: NotDeliveringSettings): Promise<NotDelivering[]> }; settings: NotDeliveringSettings };
}

const PAGE = 1_000;

/**
 * PostgreSQL is the truth, Redis disposable: each open run without a live job gets its next job id (a lingering old
 * id would be ignored by BullMQ), so after Redis comes back empty every run has a job within one tick. The hand-over
 * is fenced, so a run between its commit and its enqueue costs at most one job that stops at once. Also expires
 * leases, cancels runs paused past the TTL, and ends due coolings.
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
  // Due coolings end here: the accounts are active again and their runs go on.
  const cooled = await deps.repo.endDueCoolings(now);
  for (const a of cooled) events.emit('account:cooling-ended', { accountId: a.id, platform: a.platform });
  if (deps.notDelivering) {
    for (const a of await deps.notDelivering.repo.mark(now, deps.notDelivering.settings))
      events.emit('account:not-delivering', { accountId: a.id, platform: a.platform, sends: a.sends });
  }
  events.emit('reconcile:done', { requeued, expiredLeases, expiredPaused });
  return { requeued, expiredLeases, expiredPaused };
}
