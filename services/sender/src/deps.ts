import type { Clock, CoolingSettings } from '@metronome/core';
import type { AccountCoolingRepository, CloseRequest, CloseResult, PartWrite, RunForSend, SenderRepositories, TargetSendRepository } from '@metronome/db';
import type { Logger, Metrics } from '@metronome/observability';
import type { RunQueue } from '@metronome/queue';
import type { AccountLock, AccountPace } from '@metronome/redis';
import type { Transport } from '@metronome/transports';
import type { MediaRefs } from './media-refs.js';
import type { ClaimStatements, SharedStatement } from './statements.js';
import type { SenderEvents } from './sender-events.js';

export interface SenderSettings {
  sendsPerJob: number;
  defaultMaxSendPerMinute: number;
  defaultGroupConcurrency: number;
  rateBurst: number;
  maxRetries: number;
  sendTimeoutMs: number;
  maxInlineWaitMs: number;
  /** longest in-process wait for a chat not due yet (its per-chat interval, a retry); never below maxInlineWaitMs */
  maxGateWaitMs: number;
  lockRetryMs: number;
  /** the account lock's TTL, and a target lease's margin beyond its send's own time (SENDER_HOLD_MS) */
  lockTtlMs: number;
  chatPacePerMinute: Partial<Record<string, number>>;
  partJitterMs: number;
  cooling: CoolingSettings;
  /** longest a delivered chat's `sent` waits for a claim to ride on (writes.ts; 100 ms when absent) */
  answerHoldMs?: number;
}

/** Everything a job needs, built once by main.ts and passed in: no singletons. */
export interface SenderDeps {
  /** runs, accounts, media references: one repository per aggregate */
  repo: SenderRepositories;
  targets: TargetSendRepository;
  claims: ClaimStatements;
  loads: SharedStatement<string, RunForSend | null>;
  starts: SharedStatement<{ runId: string; at: Date }, boolean>;
  closes: SharedStatement<CloseRequest, CloseResult>;
  parts: SharedStatement<PartWrite, boolean>;
  cooling: AccountCoolingRepository;
  lock: AccountLock;
  pace: AccountPace;
  queue: RunQueue;
  /** which sender's own queue takes a run's next job (job-routes.ts); absent: the shared queue always */
  routes?: { to(accountId: string): Promise<string | null> };
  transports: Record<string, Transport | undefined>;
  media: MediaRefs;
  secretsKeys: Buffer[];
  clock: Clock;
  /** what the job reports (send results, outcomes, waits…); subscribers make the metrics and log lines */
  events: SenderEvents;
  logger: Logger;
  metrics: Metrics;
  settings: SenderSettings;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  /** aborted on SIGTERM: lanes stop claiming, finish what they send, and hand their jobs on */
  draining: AbortSignal;
}

/** The deps a job's code takes. */
export type JobDeps = SenderDeps;
