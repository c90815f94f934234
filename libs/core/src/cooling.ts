import { PROXY_FAILED } from './proxy.js';
// Automatic cooling (CONTRACT §3): an account the platform keeps making wait, or whose sends keep failing, is set `cooling` and its pace halved,
// then given back a step per clean interval (AIMD, as TCP does).

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const OUTCOME_SENT = 's';
export const OUTCOME_FAILED = 'f';

export const COOLING_REASONS = ['flood_waits', 'failures'] as const;
export type CoolingReason = (typeof COOLING_REASONS)[number];
/** WhatsApp's 463: `cooling` with no end; only an operator lifts it. */
export const COOLING_RESTRICTED = 'restricted';
export const COOLING_NOT_DELIVERING = 'not_delivering';
export const ACCOUNT_RESTRICTED = 'account_restricted';
export const ACCOUNT_SPAM_LIMITED = 'account_spam_limited';
export const ACCOUNT_FROZEN = 'account_frozen';
/** The account-unavailable codes that restrict the account (cooling without an end) rather than disconnect it. */
export const RESTRICTING_CODES: readonly string[] = [ACCOUNT_RESTRICTED, ACCOUNT_SPAM_LIMITED, ACCOUNT_FROZEN];

export interface CoolingSettings {
  enabled: boolean;
  floodWaitsPerHour: number;
  failureShare: number;
  failureWindow: number;
  coolingMs: number;
  maxCoolingMs: number;
  recoveryStep: number;
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
  floodWaits: number[];
  outcomes: string;
  paceFactor: number;
  paceSince: number | null;
  lastCooling: { at: number; ms: number } | null;
}

/** Waits that are not the platform judging the pace (hand-overs between our replicas, unsaved keys, a failing proxy): cooling ignores them. */
const HANDOVER_WAITS: readonly string[] = ['connection_replaced', 'socket_handover', 'keys_unsaved', PROXY_FAILED];

export function isFloodWait(code: string): boolean {
  return !HANDOVER_WAITS.includes(code);
}

/** The pace factor in force at `now`: the written one plus a step per whole clean interval since. */
export function paceFactorAt(factor: number, since: number | null, now: number, s: CoolingSettings): number {
  if (factor >= 1 || since === null) return Math.min(1, factor);
  const steps = Math.max(0, Math.floor((now - since) / s.recoveryIntervalMs));
  return Math.min(1, factor + steps * s.recoveryStep);
}

export function effectivePerMinute(configuredPerMinute: number, factor: number): number {
  // the epsilon keeps 40 × 0.7 at 28, not 27 by a rounding error
  return Math.max(1, Math.floor(configuredPerMinute * factor + 1e-9));
}

/** Flood waits in the hour up to `now` (a wait exactly an hour old no longer counts). */
export function recentFloodWaits(times: number[], now: number): number[] {
  return times.filter((t) => t > now - HOUR_MS && t <= now);
}

export function appendOutcomes(outcomes: string, added: string, window: number): string {
  const all = outcomes + added;
  return all.length > window ? all.slice(all.length - window) : all;
}

export interface CoolingDecision {
  cool: { until: number; reason: CoolingReason; ms: number } | null;
  paceFactor: number;
  paceSince: number | null;
}

/** After a job (its waits and outcomes added): cool on more than K flood waits in an hour or X of the last N sends failed, halving the pace. */
export function decideCooling(
  health: AccountHealth,
  s: CoolingSettings,
  configuredPerMinute: number,
  now: number,
  lastWaitInJob: number | null,
): CoolingDecision {
  const current = paceFactorAt(health.paceFactor, health.paceSince, now, s);
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

export function restrictionWords(because: string | null | undefined, platform: string): string {
  if (because === ACCOUNT_SPAM_LIMITED)
    return 'Telegram limited the account for spam in groups and channels (USER_BANNED_IN_CHANNEL): ask @SpamBot in the Telegram app when it ends, then lift the restriction';
  if (because === ACCOUNT_FROZEN)
    return 'Telegram froze the account (FROZEN_METHOD_INVALID): appeal in the Telegram app; once Telegram lifts the freeze, lift the restriction';
  if (platform === 'telegram_user')
    return 'Telegram limited the account for spam (PEER_FLOOD or USER_RESTRICTED): ask @SpamBot in the Telegram app when it ends, then lift the restriction';
  return 'the platform restricted the account (WhatsApp 463): check the number in the WhatsApp app, then lift the restriction';
}

export function coolingWords(reason: string, s: Pick<CoolingSettings, 'floodWaitsPerHour' | 'failureShare' | 'failureWindow'>): string {
  if (reason === 'flood_waits') return `the platform made it wait more than ${s.floodWaitsPerHour} times in an hour`;
  if (reason === COOLING_RESTRICTED) return 'the platform restricted it (WhatsApp 463, Telegram PEER_FLOOD); it lasts until an operator lifts it';
  if (reason === COOLING_NOT_DELIVERING) return 'none of its last sends got a delivery receipt; it lasts until receipts come again or an operator lifts it';
  if (reason === 'failures') return `more than ${Math.round(s.failureShare * 100)} % of its last ${s.failureWindow} sends failed`;
  return reason;
}
