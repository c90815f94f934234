// The limit maths of the fake platform, kept apart from the state so each rule is testable alone.
import type { BanRules } from './ban-model.js';

/** Limits applied to every account and chat unless overridden through the control API (ban-model.ts: the hidden ones). */
export interface Limits extends Partial<BanRules> {
  latencyMs: number;
  /** Per-account pace; 0 means unlimited. */
  maxPerMinute: number;
  /** Sends an account may make back to back before the pace applies. */
  burst: number;
  /** Per-chat minimum spacing between accepted messages; 0 means off. */
  slowModeSeconds: number;
  /** Probability (0..1) that an otherwise acceptable send answers 500. */
  faultRate: number;
}

/** An account's pace allowance: `tokens` sends available at time `at` (ms). */
export interface PaceState {
  tokens: number;
  at: number;
}

export const freshPace = (): PaceState => ({ tokens: Number.POSITIVE_INFINITY, at: 0 });

export type PaceCheck = { ok: true; next: PaceState } | { ok: false; waitMs: number };

// Float slack so a send exactly one interval later is not refused for 0.9999999 of a token.
const EPSILON = 1e-9;

/**
 * Token bucket of `burst` sends refilled at `maxPerMinute`, at the pace in force now: with burst 1 exactly "60000/max ms after
 * the previous accepted send", even right after a pace change. Only accepted sends take a token.
 */
export function checkPace(pace: PaceState, now: number, maxPerMinute: number, burst: number): PaceCheck {
  // Unlimited traffic leaves no credit, so a pace set later counts from the last send.
  if (maxPerMinute <= 0) return { ok: true, next: { tokens: 0, at: now } };
  const perMs = maxPerMinute / 60_000;
  const tokens = Math.min(Math.max(1, burst), pace.tokens + Math.max(0, now - pace.at) * perMs);
  if (tokens >= 1 - EPSILON) return { ok: true, next: { tokens: Math.max(0, tokens - 1), at: now } };
  return { ok: false, waitMs: (1 - tokens) / perMs };
}

/** Milliseconds the chat must still wait; 0 when a message may be accepted now. */
export function slowModeWaitMs(lastAcceptedAt: number | null, now: number, slowModeSeconds: number): number {
  if (slowModeSeconds <= 0 || lastAcceptedAt === null) return 0;
  return Math.max(0, lastAcceptedAt + slowModeSeconds * 1000 - now);
}

/** Platforms answer whole seconds, never 0 when a wait is owed. */
export function toRetryAfterSeconds(waitMs: number): number {
  // The slack keeps float noise (2000.0000000000002 ms) from adding a whole second.
  return Math.max(1, Math.ceil(waitMs / 1000 - 1e-6));
}

/** The most timestamps falling in any half-open window [t, t + windowMs). */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while ((sorted[last] as number) - (sorted[first] as number) >= windowMs) first++;
    best = Math.max(best, last - first + 1);
  }
  return best;
}
