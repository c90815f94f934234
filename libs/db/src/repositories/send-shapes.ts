import type { RunCountsLike } from '@metronome/core';
// What the sender's repository reads: a run with its campaign and account, its progress, and an account's recent sends.
import type { AccountStatus, AccountTyping, AccountWarmup, MessagePart, Platform, RunStatus, RunTrigger } from '../types.js';

/** Everything a sender job needs about its run, read in one query. */
export interface RunForSend {
  runId: string;
  status: RunStatus;
  trigger: RunTrigger;
  jobId: string | null;
  jobSeq: number;
  parts: MessagePart[];
  total: number;
  scheduledAt: Date;
  firstSendAt: Date | null;
  windowEndAt: Date | null;
  campaignId: string;
  campaignName: string;
  timezone: string;
  /** the campaign's current delivery window (HH:MM in `timezone`) */
  windowStart: string;
  windowEnd: string;
  /**
   * When each of the run's earliest pending targets comes due, ms, earliest first, up to the
   * job's limit: the lanes claim no more, and wait in-process for those not due yet that come due
   * within a lane's wait (libs/core waitsInline) rather than hand the run to another job a few ms
   * later.
   */
  dueTimes: number[];
  account: {
    id: string;
    platform: Platform;
    externalId: string | null;
    credentials: Buffer | null;
    /** its proxy URL, sealed (migrations/0035); null: none */
    proxy: Buffer | null;
    status: AccountStatus;
    blockedUntil: Date | null;
    maxSendPerMinute: number | null;
    groupConcurrency: number | null;
    /** the ban-safety kit (migrations/0009); null: not set */
    sendDelaySeconds: { min: number; max: number } | null;
    hourlyCap: number | null;
    dailyCap: number | null;
    warmup: AccountWarmup | null;
    /** the settings of limits without a column (migrations/0042), by field; absent: none */
    limits?: Record<string, unknown>;
    /** typing before each message (migrations/0011); null: none */
    typing: AccountTyping | null;
    /** the platform drops a repeated Idempotency-Key (migrations/0020): a doubtful send is sent again to settle it */
    platformDeduplicates: boolean;
    /** automatic cooling (migrations/0012): while `cooling`, until when and why */
    cooling: { until: Date | null; reason: string } | null;
    /** what the cooling decision reads (libs/core AccountHealth) */
    health: AccountHealthRow;
  };
}

/** An account's health record, as migrations/0012 keeps it. */
export interface AccountHealthRow {
  floodWaits: Date[];
  outcomes: string;
  paceFactor: number;
  paceSince: Date | null;
  lastCooledAt: Date | null;
  lastCoolingMs: number | null;
}

/** An account's sends as PostgreSQL recorded them, to rebuild its caps' windows and gap after Redis lost them. */
export interface RecentSends {
  /** one time per request that reached (or may have reached) the platform, ms */
  times: number[];
  /** the latest of them; null when none */
  lastAt: number | null;
}

/** A run's progress after a job: what is left and when the next pending target is due. */
export interface RunProgress extends RunCountsLike {
  /** earliest next_attempt_at of a pending target */
  nextDueAt: Date | null;
  /** whether any target was ever attempted */
  anyAttempt: boolean;
}
