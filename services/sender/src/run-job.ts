import {
  appendOutcomes,
  coolingWords,
  decideCooling,
  decideJobEnd,
  decideJobStart,
  effectivePerMinute,
  formatLocalTime,
  isCounted,
  isRunStatusIn,
  open,
  OPEN_RUN_STATUSES,
  paceFactorAt,
  recentFloodWaits,
  statusAtWindowClose,
  windowCloseCauseSentence,
  windowClosedSummary,
  type AccountHealth,
  type JobEnd,
  type JobStart,
  type Outcome,
} from '@metronome/core';
import type { RunForSend, RunProgress } from '@metronome/db';
import type { PaceFloors } from '@metronome/redis';
import type { Transport, TransportAccount } from '@metronome/transports';
import type { JobDeps, SenderDeps } from './deps.js';
import type { HealthPlan, LaneReport } from './job-report.js';
import { runLanes } from './send-lanes.js';

/** One sender job: up to SENDS_PER_JOB sends of one run under its account's lock, then finish, pause, or hand over to when the next send can go. */
export async function processRunJob(deps: SenderDeps, job: RunJobInput): Promise<Outcome> {
  const run = await loadJobRun(deps, job);
  if (typeof run === 'string') return run;

  const now = deps.clock.now();
  const start = decideJobStart(run, now, deps.settings.lockRetryMs);
  if (start.kind !== 'go') return applyDecision(deps, run, start, now, null);

  const transport = deps.transports[run.account.platform];
  if (!transport) {
    deps.events.emit('transport:missing', { runId: run.runId, platform: run.account.platform });
    await deps.repo.runs.pause(run.runId, 'account_unavailable', `This deployment has no ${run.account.platform} transport.`, new Date(now));
    return 'no-account';
  }
  const readiness = await transport.readiness?.(run.account.id);
  if (readiness && !readiness.ready) {
    deps.events.emit('account:elsewhere', { runId: run.runId, accountId: run.account.id, reason: readiness.reason });
    return handOver(deps, run, readiness.retryAfterMs * (1 + deps.random() * 0.5), 'lock-busy');
  }
  const outcome = await withAccountLock(deps, run, (token, floors, lease) => sendAndDecide(deps, run, transport, token, floors, lease));
  if (outcome !== 'busy') return outcome;
  return handOver(deps, run, deps.settings.lockRetryMs * (1 + deps.random() * 0.5), 'lock-busy');
}

/** Under the account lock: start the run, send with its lanes, then decide and apply the job's end. */
async function sendAndDecide(deps: JobDeps, run: RunForSend, transport: Transport, token: string, floors: PaceFloors, lease: LockLease): Promise<Outcome> {
  // A continuation finds its run already running: skip the write (claims re-check the status).
  if (run.status === 'queued' && !(await deps.starts.ask({ runId: run.runId, at: new Date(deps.clock.now()) }))) return 'inactive-campaign';
  const lanes = run.account.groupConcurrency ?? deps.settings.defaultGroupConcurrency;
  const job = {
    perMinute: accountPerMinute(deps, run, deps.clock.now()),
    planHealth: (r: Pick<LaneReport, 'floodWaits' | 'outcomes'>) => planHealth(deps, run, r),
    lease,
  };
  const report = await runLanes(deps, run, transportAccount(deps, run), transport, token, lanes, floors, job);
  if (report.stop === 'account-unavailable') return 'no-account';
  const health = report.health ?? planHealth(deps, run, report);
  const cooled = await applyHealth(deps, run, health, report.healthWritten).catch((error: unknown) => {
    deps.events.emit('account:health-lost', { accountId: run.account.id, error });
    return null;
  });
  const progress = report.progress ?? (await deps.repo.runs.progress(run.runId));
  const end = deps.clock.now();
  const decision = decideJobEnd(progress, report, run, cooled, end, deps.settings.lockRetryMs);
  return applyDecision(deps, run, decision, end, isCounted(progress) ? progress : null, report.finished);
}

function transportAccount(deps: JobDeps, run: RunForSend): TransportAccount {
  const credentials = run.account.credentials
    ? (JSON.parse(open(run.account.credentials, deps.secretsKeys).toString('utf8')) as Record<string, unknown>)
    : null;
  const proxy = run.account.proxy ? open(run.account.proxy, deps.secretsKeys).toString('utf8') : null;
  return { id: run.account.id, externalId: run.account.externalId, credentials, proxy };
}

export interface RunJobInput {
  jobId: string;
  runId: string;
}

/** A job's first step: its run with when its next targets come due, or the outcome that ends the job at once. */
export async function loadJobRun(deps: JobDeps, job: RunJobInput): Promise<RunForSend | Outcome> {
  const run = await deps.loads.ask(job.runId);
  if (!run) return 'inactive-campaign';
  // A job that no longer carries the run (superseded by a resume, a retry or a continuation) does nothing.
  if (run.jobId !== job.jobId) return 'stale-message';
  if (!isRunStatusIn(run.status, OPEN_RUN_STATUSES)) return 'inactive-campaign';
  return run;
}

/** Runs `work` holding the account's lock (one fan-out per account), renewed meanwhile (`lease`: until when surely ours) and released after; 'busy' when another job holds it. */
export async function withAccountLock<T>(
  deps: JobDeps,
  run: RunForSend,
  work: (token: string, floors: PaceFloors, lease: LockLease) => Promise<T>,
): Promise<T | 'busy'> {
  const accountId = run.account.id;
  const ttlMs = deps.settings.lockTtlMs;
  const askedAt = deps.clock.now();
  const lock = await deps.lock.acquire(accountId, ttlMs);
  if (!lock.held) return 'busy';
  const lease = new LockLease(ttlMs, askedAt);
  const renew = setInterval(
    () => {
      const at = deps.clock.now();
      deps.lock
        .extend(accountId, lock.token, ttlMs)
        .then((ours) => (ours ? lease.renewed(at) : lease.lose()))
        .catch(() => undefined);
    },
    Math.max(100, Math.floor(ttlMs / 3)),
  );
  const floors: PaceFloors = { paceMs: 0, gapMs: 0 };
  try {
    return await work(lock.token, floors, lease);
  } finally {
    clearInterval(renew);
    // no renewal after this: by then the lock has ended by itself, ours or not
    const endsBy = deps.clock.now() + ttlMs;
    const release = () => deps.lock.release(accountId, lock.token, { nowMs: deps.clock.now(), ...floors });
    await release().catch(() => void releaseWhenAnswered(deps, accountId, floors, release, endsBy).catch(() => undefined));
  }
}

/** How long a job's account lock is surely its own: the TTL from the request of the last acquire or renewal Redis confirmed. */
export class LockLease {
  private until: number;
  private lost = false;

  constructor(
    private readonly ttlMs: number,
    acquiredAt: number,
  ) {
    this.until = acquiredAt + ttlMs;
  }

  renewed(at: number): void {
    this.until = Math.max(this.until, at + this.ttlMs);
  }

  /** Redis said the token no longer holds the lock: the job's lanes stop at their next step. */
  lose(): void {
    this.lost = true;
  }

  /** Until a sixth of the TTL before its end: one renewal missed (they come every third) leaves room, and what the check lets go lands before the lock can be another's. */
  heldAt(now: number): boolean {
    return !this.lost && now < this.until - this.ttlMs / 6;
  }
}

/** The first wait before a failed release is tried again; it doubles up to RELEASE_RETRY_MAX_MS. */
const RELEASE_RETRY_MS = 250;
const RELEASE_RETRY_MAX_MS = 2_000;

/** Retries a lock's release until Redis answers or the lock ends by itself: the account's next job need not wait out the TTL. */
async function releaseWhenAnswered(deps: JobDeps, accountId: string, floors: PaceFloors, release: () => Promise<boolean>, endsBy: number): Promise<void> {
  const since = deps.clock.now();
  let error: unknown;
  for (let waitMs = RELEASE_RETRY_MS; deps.clock.now() + waitMs < endsBy; waitMs = Math.min(2 * waitMs, RELEASE_RETRY_MAX_MS)) {
    await deps.sleep(waitMs);
    try {
      await release();
      deps.events.emit('lock:released-late', { accountId, afterMs: deps.clock.now() - since });
      return;
    } catch (e) {
      error = e;
    }
  }
  if (floors.paceMs > 0) deps.events.emit('pace:unsettled', { accountId, what: 'pace', error });
  if (floors.gapMs > 0) deps.events.emit('pace:unsettled', { accountId, what: 'gap', error });
}

/** A job's last step: applies a start or end decision of libs/core (job-end.ts). Finishes, pauses, closes the window or hands the run to its next job. */
export async function applyDecision(
  deps: JobDeps,
  run: RunForSend,
  decision: Exclude<JobStart | JobEnd, { kind: 'go' }>,
  now: number,
  progress: RunProgress | null,
  finished = false,
): Promise<Outcome> {
  switch (decision.kind) {
    case 'continue':
      return handOver(deps, run, decision.at - now, decision.outcome);
    case 'pause':
      await deps.repo.runs.pause(run.runId, decision.reason, decision.summary, new Date(now));
      return decision.outcome;
    case 'finish':
      if (!(finished && decision.status === 'success')) await deps.repo.runs.finish(run.runId, decision.status, decision.summary, new Date(now));
      return decision.outcome;
    case 'close-window': {
      const because = decision.because ? windowCloseCauseSentence(decision.because, run.timezone, deps.settings.cooling) : undefined;
      await closeWindow(deps, run, progress ?? (await deps.repo.runs.progress(run.runId)), because);
      return decision.outcome;
    }
  }
}

/** Hands the run to a new job delayed by `delayMs`. */
export async function handOver(deps: JobDeps, run: RunForSend, delayMs: number, outcome: Outcome): Promise<Outcome> {
  const next = await deps.repo.runs.handOver(run.runId, run.jobSeq, new Date(deps.clock.now()));
  if (!next) return 'stale-message';
  // If this enqueue is lost (Redis down), the scheduler's reconciler re-adds the job by its id; an unknown route is the shared queue.
  const to = (await deps.routes?.to(run.account.id).catch(() => null)) ?? null;
  await deps.queue.enqueue(run.runId, next.jobSeq, Math.max(0, delayMs), to);
  return outcome;
}

/** The window closed with targets pending: the run pauses (resumable), or fails if it never sent. */
async function closeWindow(deps: JobDeps, run: RunForSend, progress: RunProgress, because?: string): Promise<void> {
  const now = new Date(deps.clock.now());
  const closedAt = formatLocalTime(run.windowEndAt ?? now, run.timezone);
  const summary = windowClosedSummary(progress, closedAt, run.timezone, {
    perMinute: accountPerMinute(deps, run, now.getTime()),
    partsPerChat: run.parts.length,
    scheduledAt: run.scheduledAt,
    firstSendAt: run.firstSendAt,
    window: { start: run.windowStart, end: run.windowEnd },
    windowEndAt: run.windowEndAt ?? now,
  });
  const prefix = because ? `${because} ` : '';
  if (statusAtWindowClose(progress, progress.anyAttempt) === 'paused') await deps.repo.runs.pause(run.runId, 'window_closed', prefix + summary, now);
  else await deps.repo.runs.failBeforeFirstSend(run.runId, `${prefix}Delivery window closed at ${closedAt} (${run.timezone}) before the first send.`, now);
}

/** The account's pace now: the configured one (or the default) times its pace factor, never below 1 a minute. */
export function accountPerMinute(deps: JobDeps, run: RunForSend, now: number): number {
  const configured = run.account.maxSendPerMinute ?? deps.settings.defaultMaxSendPerMinute;
  const h = run.account.health;
  return effectivePerMinute(configured, paceFactorAt(h.paceFactor, h.paceSince?.getTime() ?? null, now, deps.settings.cooling));
}

/** After a job's lanes stopped: its flood waits and finished chats added to the account's health, and whether it cools (core decideCooling). */
export function planHealth(deps: JobDeps, run: RunForSend, report: Pick<LaneReport, 'floodWaits' | 'outcomes'>): HealthPlan {
  const s = deps.settings.cooling;
  const now = deps.clock.now();
  const h = run.account.health;
  const health: AccountHealth = {
    floodWaits: recentFloodWaits([...h.floodWaits.map((d) => d.getTime()), ...report.floodWaits], now),
    outcomes: appendOutcomes(h.outcomes, report.outcomes, s.failureWindow),
    paceFactor: h.paceFactor,
    paceSince: h.paceSince?.getTime() ?? null,
    lastCooling: h.lastCooledAt && h.lastCoolingMs ? { at: h.lastCooledAt.getTime(), ms: h.lastCoolingMs } : null,
  };
  const lastWait = report.floodWaits.length > 0 ? Math.max(...report.floodWaits) : null;
  const configured = run.account.maxSendPerMinute ?? deps.settings.defaultMaxSendPerMinute;
  const decision = decideCooling(health, s, configured, now, lastWait);
  if (decision.cool) return { kind: 'cool', ...decision.cool, paceFactor: decision.paceFactor };
  // Deliveries into a record already full of deliveries leave it as it was: no statement.
  const unchanged = report.floodWaits.length === 0 && health.outcomes === h.outcomes && health.floodWaits.length === h.floodWaits.length;
  if (unchanged) return { kind: 'unchanged' };
  return {
    kind: 'write',
    write: {
      floodWaits: health.floodWaits.map((t) => new Date(t)),
      outcomes: health.outcomes,
      paceFactor: decision.paceFactor,
      paceSince: decision.paceSince === null ? null : new Date(decision.paceSince),
    },
  };
}

/** Carries out a job's health plan once its last write is done (`written`: the health rode on it). Returns the cooling it began (null: none). */
export async function applyHealth(deps: JobDeps, run: RunForSend, plan: HealthPlan, written: boolean): Promise<{ until: number; reason: string } | null> {
  const at = new Date(deps.clock.now());
  if (plan.kind === 'write' && !written) await deps.cooling.recordHealth(run.account.id, plan.write, at);
  if (plan.kind !== 'cool') return null;
  const { until, reason, ms, paceFactor } = plan;
  const cooled = await deps.cooling.cool(run.account.id, { since: at, until: new Date(until), reason, ms, paceFactor, paceSince: new Date(until) }, at);
  if (!cooled) return null;
  deps.events.emit('account:cooling', {
    accountId: run.account.id,
    platform: run.account.platform,
    reason,
    until,
    paceFactor,
    words: coolingWords(reason, deps.settings.cooling),
  });
  return { until, reason };
}
