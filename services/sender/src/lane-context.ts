import type { CoolingReason, MessageTemplate, SendLimits, SendResult, StillPending, WrittenPace } from '@metronome/core';
import type { ClaimedTarget, HealthWrite, RunForSend, RunProgress, SentSettlement, TargetRef } from '@metronome/db';
import type { PaceReservation } from '@metronome/redis';
import type { Transport, TransportAccount } from '@metronome/transports';
import type { JobDeps } from './deps.js';

/** Each part's compiled text or caption: null when it is plain (sent as it is, no work per send). */
export type PartTemplates = (MessageTemplate | null)[];

/** What a job's end does to its account's health: cool it, write what changed, or nothing. */
export type HealthPlan =
  | { kind: 'cool'; until: number; reason: CoolingReason; ms: number; paceFactor: number }
  | { kind: 'write'; write: HealthWrite }
  | { kind: 'unchanged' };

/** Why a job's lanes stopped before running out of due targets. */
export type StopReason = 'window' | 'pace' | 'account-wait' | 'account-unavailable' | 'lock-lost' | 'error' | 'storage' | 'drain';

/** What the lanes of one job did, for the job's end-of-job decision. */
export interface LaneReport {
  delivered: number;
  attempts: number;
  /** parts claimed so far (the SENDS_PER_JOB budget is spent at claim time, so lanes cannot overshoot it together) */
  reserved: number;
  stop: StopReason | null;
  /** when the pace next allows a send (set when a lane yielded for pace) */
  nextTokenAt: number;
  /** when a flood wait ends (set on account-wait) */
  blockedUntil: number;
  /** when the account's cap frees a slot (set when a lane met its hourly or daily cap; 0: none) */
  capUntil: number;
  /** a lane found no due pending target: the others stop claiming too (their claims would come back empty) */
  drained: boolean;
  /** when the platform made the account wait during this job (automatic cooling counts them) */
  floodWaits: number[];
  /** one letter per chat this job finished, delivered (s) or failed for good (f), for automatic cooling */
  outcomes: string;
  /** the run's counts, read with the job's last write once its lanes stopped (null: not read; StillPending: a target was still pending, so only its due time was read) */
  progress: RunProgress | StillPending | null;
  /** what the job does to its account's health (run-job.ts `planHealth`), planned once its lanes stopped */
  health: HealthPlan | null;
  /** the health's write rode on the job's last write */
  healthWritten: boolean;
  /** the job's last write finished the run `success` (every target sent): its end needs no statement */
  finished: boolean;
}

/** What a lane's claim came back with: a target, none due (the run is drained), or `lost` (the statement's answer was lost). */
export type LaneClaim = ClaimedTarget | null | 'lost';

/** What follows one part's answer: the chat's next part, the chat's end for this job, or its `sent` to write. */
export type PartNext = 'next-part' | 'stop' | SentSettlement;

/** The job's writes as the lanes call them (JobWrites in writes.ts). */
export interface LaneWrites {
  claim(sending: boolean): Promise<LaneClaim>;
  delivered(answer: SentSettlement): void;
  markWaiting(target: TargetRef): Promise<boolean>;
  release(target: TargetRef, nextAttemptAt: number, code?: string | null): Promise<void>;
  result(target: ClaimedTarget, index: number, result: SendResult, firstPartStartedAt: number): Promise<PartNext>;
}

/** What the lanes of one job share. */
export interface LaneContext {
  run: RunForSend;
  account: TransportAccount;
  transport: Transport;
  /** the account lock's token, which is also the lease owner of every target this job claims */
  token: string;
  report: LaneReport;
  /** the account's slot interval, ms: its configured pace less the margin (core PACE_MARGIN) */
  intervalMs: number;
  /**
   * the account's configured interval, ms, which the job's own requests keep among themselves
   * from when each really left: the slots' margin absorbs their jitter, a larger one pushes
   */
  configuredIntervalMs: number;
  burst: number;
  /** the per-chat pace of this platform (sends per minute; 0: none) */
  chatPerMinute: number;
  /** the furthest ahead a first part may reserve its pace slot */
  firstPartMaxWaitMs: number;
  /** the longest a lane waits, from its turn, for a chat not due yet (SENDER_MAX_GATE_WAIT_MS, plus the lanes ahead) */
  gateMaxWaitMs: number;
  /** the longest pace interval a part may wait for (account or, on platforms with one, chat) */
  partSpacingMs: number;
  /** when each target the job may claim comes due (RunForSend.dueTimes, up to its budget); a claim past them would find nothing */
  dueTimes: number[];
  /** how many of `dueTimes` lanes have taken */
  taken: number;
  /** how long a claim is leased */
  leaseMs: number;
  /** when this job's lanes went ahead from their slots (to claim and write) */
  written: WrittenPace;
  /** when this job's requests were really written */
  sent: WrittenPace;
  /** settles once the job's latest request left this process, or its send ended without it: the next write waits for it (gate.ts spaceWrite) */
  writing: Promise<void>;
  /** when the job's latest request left this process, as its transport told (0: none told) */
  leftAt: number;
  /** the latest pace slot this job reserved */
  lastSlotAt: number;
  /** the account's ban-safety limits (human gap, caps); null: none, its sends take the plain pace */
  limits: SendLimits | null;
  /** when this job last wrote a request (0: not yet), for the least gap between two */
  lastWriteAt: number;
  /** each part's compiled text or caption (personal messages); null entries are plain */
  templates: PartTemplates;
  /** the job's first send follows a platform wait that just ended: it goes without typing (parts.ts) */
  skipTypingOnce: boolean;
  /** the job's plain pace reservations, several lanes' in one call when they ask together */
  paceBatches: { reserve(maxWaitMs: number): Promise<PaceReservation> };
  /** every write of the job to its targets (writes.ts) */
  writes: LaneWrites;
  /** lanes sleeping (for a slot, a jitter), woken at once by a drain */
  sleepers: Set<() => void>;
}

// Hard stops end a chat mid-way (its later parts wait); soft stops let a started chat finish
// its parts, so a chat's parts stay together.
export const HARD_STOPS: ReadonlySet<StopReason> = new Set(['window', 'account-wait', 'account-unavailable', 'lock-lost', 'error', 'storage', 'drain']);

export function stopWith(report: LaneReport, reason: StopReason): void {
  // the first hard stop wins over soft ones
  if (report.stop === null || (!HARD_STOPS.has(report.stop) && HARD_STOPS.has(reason))) report.stop = reason;
}

export function hardStopped(report: LaneReport): boolean {
  return report.stop !== null && HARD_STOPS.has(report.stop);
}

export function windowClosed(deps: JobDeps, run: RunForSend): boolean {
  return run.windowEndAt !== null && deps.clock.now() >= run.windowEndAt.getTime();
}

/**
 * Sleeps `ms`, or less when the sender starts draining (the caller checks for the stop). The
 * job listens for the drain once (runLanes) and wakes its sleepers: a listener per sleep would
 * cost more than the send it paces.
 */
export async function pause(deps: JobDeps, ctx: LaneContext, ms: number): Promise<void> {
  if (ms <= 0 || deps.draining.aborted) return;
  await new Promise<void>((resolve) => {
    ctx.sleepers.add(resolve);
    void deps.sleep(Math.ceil(ms)).then(() => {
      ctx.sleepers.delete(resolve);
      resolve();
    });
  });
}

/** Sleeps until `at` (a target's due time: never claimed before it). False when a hard stop or a drain came meanwhile. */
export async function waitUntil(deps: JobDeps, ctx: LaneContext, at: number): Promise<boolean> {
  for (;;) {
    if (hardStopped(ctx.report) || deps.draining.aborted) return false;
    const wait = at - deps.clock.now();
    if (wait <= 0) return true;
    await pause(deps, ctx, wait);
  }
}

/** Wakes every sleeping lane of the job when the sender starts draining; returns the unsubscribe. */
export function wakeOnDrain(deps: JobDeps, ctx: LaneContext): () => void {
  const wake = () => {
    for (const resolve of ctx.sleepers) resolve();
    ctx.sleepers.clear();
  };
  deps.draining.addEventListener('abort', wake, { once: true });
  return () => deps.draining.removeEventListener('abort', wake);
}
