import type { AccountLimitSettings, ChatWindow, Held, LimitSetting, LimitState } from './limit-entry.js';
import { COOLING, FLOOD_WAIT, PROXY } from './limits-account.js';
import { NEW_CHAT_LIMIT, SLOW_MODE } from './limits-chat.js';
import { CAP, CHAT_PACE, HUMAN_GAP, PACE, WARMUP } from './limits-pace.js';
import { CHAT_CAP } from './limits-chat-cap.js';
import { sendLimits, type SendLimits } from './send-safety.js';
import { effectiveDailyCap } from './warmup.js';

export type { AccountLimitSettings, ChatWindow, HoldFacts, Limit, LimitSetting, LimitState, LimitValues, SettingPart } from './limit-entry.js';
export { withFit } from './limit-entry.js';
export { CHAT_WAIT_CODES } from './limits-chat.js';
export { gcraFreeAt } from './limits-pace.js';

/** Every limit, one entry each: the gate reserves by it, `waiting` explains by it, in this order. */
export const LIMITS = [COOLING, PROXY, CAP, WARMUP, HUMAN_GAP, PACE, CHAT_PACE, SLOW_MODE, FLOOD_WAIT, NEW_CHAT_LIMIT, CHAT_CAP] as const;

export type LimitKey = (typeof LIMITS)[number]['key'];
type LimitReason = NonNullable<(typeof LIMITS)[number]['waiting']>;

/** Why a run (or one of its targets) is not sending right now (CONTRACT §3, `waiting`): the run's own states, then the limits'. */
export type WaitingReason = 'scheduled' | 'window_closed' | 'interval_gate' | 'account_busy' | 'retry_backoff' | 'account_unavailable' | 'queue' | LimitReason;
export type Waiting = Held<WaitingReason>;

export type TargetHold = 'interval_gate' | 'retry_backoff' | LimitReason;

/** Every reason `waiting` may give, for the API's schema: the contract's first fourteen in their order, then the limits' since. */
export const WAITING_REASONS: readonly WaitingReason[] = [
  ...new Set<WaitingReason>([
    ...(['scheduled', 'window_closed', 'interval_gate', 'pace', 'flood_wait', 'slow_mode', 'account_busy', 'cap', 'retry_backoff'] as const),
    ...(['account_unavailable', 'queue', 'cooling', 'proxy_failed', 'new_chat_limit'] as const),
    ...LIMITS.flatMap((l) => (l.waiting ? [l.waiting] : [])),
  ]),
];

/** The coded holds, as libs/db counts them: a target with one of `codes` is held by `kind`. */
export const HOLD_CLASSES: readonly { kind: TargetHold; codes: readonly string[] }[] = LIMITS.flatMap((l) =>
  l.hold && l.waiting && l.hold.codes.length > 0 ? [{ kind: l.waiting as TargetHold, codes: l.hold.codes }] : [],
);

/** The limit a pace script's `limitedBy` names: 'account' is the account's pace, 'chat' the chat's, else a limit's key. */
export function gateLimit(limitedBy: string): (typeof LIMITS)[number] {
  const key = limitedBy === 'account' ? 'pace' : limitedBy === 'chat' ? 'chat_pace' : limitedBy;
  const found = LIMITS.find((l) => l.key === key);
  if (!found) throw new Error(`no limit named ${limitedBy}`);
  return found;
}

export function limitsOfPhase(phase: 'run' | 'connection' | 'platform' | 'due'): readonly (typeof LIMITS)[number][] {
  return LIMITS.filter((l) => l.phase === phase);
}

/** The per-send limits the gate reserves under now (human gap, caps; the daily cap lowered by today's warm-up); null: none. */
export function gateLimits(a: AccountLimitSettings, now: number): SendLimits | null {
  const warmup = a.warmup ? { startedAt: new Date(a.warmup.startedAt), steps: [...a.warmup.steps] } : null;
  return sendLimits({ sendDelay: a.sendDelaySeconds, hourlyCap: a.hourlyCap, dailyCap: effectiveDailyCap(a.dailyCap, warmup, new Date(now)) });
}

export function chatWindows(a: Pick<AccountLimitSettings, 'limits'>): ChatWindow[] {
  const values = a.limits ?? {};
  return LIMITS.flatMap((l) => {
    const setting: LimitSetting | undefined = 'setting' in l ? (l.setting as LimitSetting) : undefined;
    const w = setting && 'chatWindow' in l && l.chatWindow ? l.chatWindow(values[setting.field] ?? null) : null;
    return w ? [w] : [];
  });
}

export const LIMIT_SETTINGS: readonly LimitSetting[] = LIMITS.flatMap((l) => ('setting' in l && l.setting ? [l.setting as LimitSetting] : []));

export function holdCode(key: string): string | null {
  const l = gateLimit(key);
  return 'hold' in l && l.hold ? (l.hold.codes[0] ?? null) : null;
}

export function limitFreeTimes(
  s: LimitState | undefined,
  pace: { perMinute: number; burst: number },
  now: Date,
): { paceFreeAt: Date | null; gapFreeAt: Date | null; capFreeAt: Date | null } {
  const out = { paceFreeAt: null as Date | null, gapFreeAt: null as Date | null, capFreeAt: null as Date | null };
  if (!s) return out;
  for (const l of LIMITS) {
    if (!('freeAt' in l) || !l.freeAt || !('fact' in l) || !l.fact) continue;
    const at = l.freeAt(s, pace);
    if (at > now.getTime()) out[l.fact] = new Date(at);
  }
  return out;
}
