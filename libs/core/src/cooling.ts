import { PROXY_FAILED } from './proxy.js';
/**
 * Automatic cooling (CONTRACT §3, accounts, "Automatic cooling"). An account that the platform
 * keeps telling to wait, or whose sends keep failing for good, is set `cooling` for a while and
 * its pace lowered: halved each time it cools (multiplicative decrease), then given back by a
 * step of the configured pace for every clean interval after the cooling ends (additive
 * recovery), as TCP does with a congested link. Everything here is pure: the caller passes the
 * account's recorded health, its settings and `now`.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** One letter per finished send in an account's recent outcomes: delivered or failed for good. */
export const OUTCOME_SENT = 's';
export const OUTCOME_FAILED = 'f';

export const COOLING_REASONS = ['flood_waits', 'failures'] as const;
export type CoolingReason = (typeof COOLING_REASONS)[number];
/**
 * The platform restricted the account (WhatsApp's 463): `cooling` with this reason and no end.
 * It is not automatic cooling's to end: it lasts until an operator lifts it.
 */
export const COOLING_RESTRICTED = 'restricted';
/** A cooling without an end: none of the account's last sends got a delivery receipt (it lifts itself when one comes). */
export const COOLING_NOT_DELIVERING = 'not_delivering';
/** The send result code (account-unavailable) of an account the platform restricted: the sender restricts it, never disconnects it. */
export const ACCOUNT_RESTRICTED = 'account_restricted';
/** Telegram limited the account for spam in groups and channels (USER_BANNED_IN_CHANNEL on every one): restricted too. */
export const ACCOUNT_SPAM_LIMITED = 'account_spam_limited';
/** Telegram froze the account (FROZEN_METHOD_INVALID): restricted too, until an appeal succeeds. */
export const ACCOUNT_FROZEN = 'account_frozen';
/** The account-unavailable codes that restrict the account (cooling without an end) rather than disconnect it. */
export const RESTRICTING_CODES: readonly string[] = [ACCOUNT_RESTRICTED, ACCOUNT_SPAM_LIMITED, ACCOUNT_FROZEN];

export interface CoolingSettings {
  enabled: boolean;
  /** more flood waits than this in one rolling hour cool the account (K) */
  floodWaitsPerHour: number;
  /** a share of failed sends above this (0–1) among the last `failureWindow` cools it (X) */
  failureShare: number;
  /** how many of the latest sends the share is taken over, and how many it needs first (N) */
  failureWindow: number;
  /** the first cooling's length */
  coolingMs: number;
  /** the longest a cooling lasts, however often it repeats */
  maxCoolingMs: number;
  /** what one clean interval gives back, as a share of the configured pace (0–1) */
  recoveryStep: number;
  /** the clean interval: this long without a flood wait or a cooling */
  recoveryIntervalMs: number;
}

export const DEFAULT_COOLING: CoolingSettings = {
  enabled: true,
  floodWaitsPerHour: 3,
  failureShare: 0.2,
  failureWindow: 50,
  coolingMs: 30 * 60_000,
  maxCoolingMs: DAY_MS,
  recoveryStep: 0.1,
  recoveryIntervalMs: 10 * 60_000,
};

/** What PostgreSQL keeps of an account's health between jobs (accounts, migrations/0012). */
export interface AccountHealth {
  /** when the platform made the account wait, ms, oldest first (older than an hour may linger) */
  floodWaits: number[];
  /** the latest finished sends, oldest first: OUTCOME_SENT or OUTCOME_FAILED each */
  outcomes: string;
  /** the pace factor as last written (1: the configured pace) */
  paceFactor: number;
  /** when that factor was written, or when the cooling that wrote it ends; recovery counts from here */
  paceSince: number | null;
  /** the previous cooling: when it began and how long it was (a repeat within 24 h doubles it) */
  lastCooling: { at: number; ms: number } | null;
}

/**
 * Account waits that are not the platform judging the account's pace, so cooling does not
 * count them: WhatsApp's connection hand-overs between our own replicas, a socket held
 * closed until PostgreSQL takes its keys, and the account's own proxy refusing (libs/transports).
 */
const HANDOVER_WAITS: readonly string[] = ['connection_replaced', 'socket_handover', 'keys_unsaved', PROXY_FAILED];

/** Whether an account wait (its code) is a flood wait automatic cooling counts: `flood_wait`, `rate_overlimit`, … */
export function isFloodWait(code: string): boolean {
  return !HANDOVER_WAITS.includes(code);
}

/** The pace factor in force at `now`: the written one plus a step per whole clean interval since. */
export function paceFactorAt(factor: number, since: number | null, now: number, s: CoolingSettings): number {
  if (factor >= 1 || since === null) return Math.min(1, factor);
  const steps = Math.max(0, Math.floor((now - since) / s.recoveryIntervalMs));
  return Math.min(1, factor + steps * s.recoveryStep);
}

/** The pace the sender keeps: the configured one times the factor, never below 1 a minute. */
export function effectivePerMinute(configuredPerMinute: number, factor: number): number {
  // the epsilon keeps 40 × 0.7 at 28, not 27 by a rounding error
  return Math.max(1, Math.floor(configuredPerMinute * factor + 1e-9));
}

/** Flood waits in the hour up to `now` (a wait exactly an hour old no longer counts). */
export function recentFloodWaits(times: number[], now: number): number[] {
  return times.filter((t) => t > now - HOUR_MS && t <= now);
}

/** Adds a job's outcomes to the recorded ones, keeping the latest `window`. */
export function appendOutcomes(outcomes: string, added: string, window: number): string {
  const all = outcomes + added;
  return all.length > window ? all.slice(all.length - window) : all;
}

export interface CoolingDecision {
  /** cool the account until then, for that reason; null: it keeps sending */
  cool: { until: number; reason: CoolingReason; ms: number } | null;
  /** the factor to write, and the time recovery counts from (the health's own when unchanged) */
  paceFactor: number;
  paceSince: number | null;
}

/**
 * Decides after a job, from the account's health with the job's flood waits and outcomes
 * already added: cool when more than K flood waits fell in the last hour, or when more than X
 * of the last N sends failed (never before N sends). Cooling halves the pace in force (never
 * below 1 a minute) and recovery starts when the cooling ends. A flood wait that does not cool
 * restarts the clean interval, keeping what was recovered so far. `lastWaitInJob` is the job's
 * latest flood wait (null: none).
 */
export function decideCooling(
  health: AccountHealth,
  s: CoolingSettings,
  configuredPerMinute: number,
  now: number,
  lastWaitInJob: number | null,
): CoolingDecision {
  const current = paceFactorAt(health.paceFactor, health.paceSince, now, s);
  // Without a wait the written factor stands (what it recovered since is worked out when read);
  // a wait writes what was recovered so far and restarts the clean interval from it.
  const keep: CoolingDecision =
    lastWaitInJob === null
      ? { cool: null, paceFactor: health.paceFactor, paceSince: health.paceSince }
      : current >= 1
        ? { cool: null, paceFactor: 1, paceSince: null }
        : { cool: null, paceFactor: current, paceSince: lastWaitInJob };
  if (!s.enabled) return keep;
  const reason = coolingReason(health, s, now);
  if (reason === null) return keep;
  const repeat = health.lastCooling !== null && now - health.lastCooling.at < DAY_MS;
  const ms = repeat ? Math.min(s.maxCoolingMs, health.lastCooling!.ms * 2) : Math.min(s.maxCoolingMs, s.coolingMs);
  const floor = 1 / configuredPerMinute;
  return { cool: { until: now + ms, reason, ms }, paceFactor: Math.max(floor, current * 0.5), paceSince: now + ms };
}

/** Why the account must cool now, or null. Flood waits are judged first: they are the platform's own word. */
export function coolingReason(health: Pick<AccountHealth, 'floodWaits' | 'outcomes'>, s: CoolingSettings, now: number): CoolingReason | null {
  if (recentFloodWaits(health.floodWaits, now).length > s.floodWaitsPerHour) return 'flood_waits';
  const last = health.outcomes.slice(-s.failureWindow);
  if (last.length < s.failureWindow) return null;
  let failed = 0;
  for (const c of last) if (c === OUTCOME_FAILED) failed++;
  return failed / last.length > s.failureShare ? 'failures' : null;
}

/** Which restriction it is, and what the operator does, in words (a restricting code; anything else: the general case). */
export function restrictionWords(because: string | null | undefined, platform: string): string {
  if (because === ACCOUNT_SPAM_LIMITED)
    return 'Telegram limited the account for spam in groups and channels (USER_BANNED_IN_CHANNEL): ask @SpamBot in the Telegram app when it ends, then lift the restriction';
  if (because === ACCOUNT_FROZEN)
    return 'Telegram froze the account (FROZEN_METHOD_INVALID): appeal in the Telegram app; once Telegram lifts the freeze, lift the restriction';
  if (platform === 'telegram_user')
    return 'Telegram limited the account for spam (PEER_FLOOD or USER_RESTRICTED): ask @SpamBot in the Telegram app when it ends, then lift the restriction';
  return 'the platform restricted the account (WhatsApp 463): check the number in the WhatsApp app, then lift the restriction';
}

/** The cooling's reason in words, for the account's event and the runs it holds. */
export function coolingWords(reason: string, s: Pick<CoolingSettings, 'floodWaitsPerHour' | 'failureShare' | 'failureWindow'>): string {
  if (reason === 'flood_waits') return `the platform made it wait more than ${s.floodWaitsPerHour} times in an hour`;
  if (reason === COOLING_RESTRICTED) return 'the platform restricted it (WhatsApp 463, Telegram PEER_FLOOD); it lasts until an operator lifts it';
  if (reason === COOLING_NOT_DELIVERING) return 'none of its last sends got a delivery receipt; it lasts until receipts come again or an operator lifts it';
  if (reason === 'failures') return `more than ${Math.round(s.failureShare * 100)} % of its last ${s.failureWindow} sends failed`;
  return reason;
}
