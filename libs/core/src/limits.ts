import { COOLING_NOT_DELIVERING, COOLING_RESTRICTED, restrictionWords } from './cooling.js';
import type { RunFacts, Waiting, WaitingReason } from './run-facts.js';
import { chatsThatFit, runEta } from './run-eta.js';
import { sendLimits, type SendDelay, type SendLimits } from './send-safety.js';
import { chats, localTime, paceWords } from './waiting-words.js';
import { effectiveDailyCap, type Warmup } from './warmup.js';

/**
 * Every limit on an account's sends, one entry each: the sender's gate and the `waiting`
 * explanation (run-waiting.ts) both read this list, so a new limit is one entry and its key.
 *
 * `gate`: what the gate does when the reservation names this limit (`limitedBy` of the pace
 * scripts): the lane waits for its chat only (`chat`), or the job ends and its run is due again
 * when the limit frees a slot (`job`); null when the gate meets it elsewhere (cooling is met
 * before the lock, the gap inside every reservation, warm-up through the daily cap).
 * `phase`/`explain`: where in the explanation's precedence it answers (`run`: before the
 * window, it stops every chat; `due`: only chats due now wait for it) and its sentence.
 */
export interface Limit {
  key: LimitKey;
  waiting: WaitingReason | null;
  gate: 'chat' | 'job' | null;
  phase: 'run' | 'due' | null;
  explain?: (f: RunFacts, now: Date) => Waiting | null;
}

export type LimitKey = 'cooling' | 'cap' | 'warmup' | 'human_gap' | 'pace' | 'chat_pace';

/** The explanation's order among the limits of one phase is this list's order. */
export const LIMITS: readonly Limit[] = [
  { key: 'cooling', waiting: 'cooling', gate: null, phase: 'run', explain: explainCooling },
  { key: 'cap', waiting: 'cap', gate: 'job', phase: 'due', explain: explainCap },
  { key: 'warmup', waiting: 'cap', gate: null, phase: null },
  { key: 'human_gap', waiting: 'pace', gate: null, phase: null },
  { key: 'pace', waiting: 'pace', gate: 'job', phase: 'due', explain: explainPace },
  { key: 'chat_pace', waiting: null, gate: 'chat', phase: null },
];

/** The pace scripts' `limitedBy` is the key of a limit: 'account' names the account's pace. */
export function gateLimit(limitedBy: 'account' | 'chat' | 'cap'): Limit {
  const key: LimitKey = limitedBy === 'account' ? 'pace' : limitedBy === 'chat' ? 'chat_pace' : 'cap';
  return LIMITS.find((l) => l.key === key)!;
}

/** The limits of one phase that explain a run, in order. */
export function limitsOfPhase(phase: 'run' | 'due'): readonly Limit[] {
  return LIMITS.filter((l) => l.phase === phase);
}

/** An account's ban-safety settings as the gate reads them. */
export interface AccountLimitSettings {
  sendDelaySeconds: SendDelay | null;
  hourlyCap: number | null;
  dailyCap: number | null;
  warmup: { startedAt: Date | string; steps: Warmup['steps'] } | null;
}

/** The per-send limits the gate reserves under now (human gap, caps; the daily cap lowered by today's warm-up); null: none. */
export function gateLimits(a: AccountLimitSettings, now: number): SendLimits | null {
  const warmup = a.warmup ? { startedAt: new Date(a.warmup.startedAt), steps: a.warmup.steps } : null;
  return sendLimits({ sendDelay: a.sendDelaySeconds, hourlyCap: a.hourlyCap, dailyCap: effectiveDailyCap(a.dailyCap, warmup, new Date(now)) });
}

/**
 * The account cools (automatic cooling): the run sends nothing until the cooling ends, and goes
 * on by itself then; if its delivery window closes first, the sender pauses it.
 */
function explainCooling(f: RunFacts, now: Date): Waiting | null {
  if (f.account.status !== 'cooling') return null;
  const until = f.account.coolingUntil ?? null;
  if (f.account.coolingReason === COOLING_RESTRICTED) {
    return {
      reason: 'cooling',
      until: null,
      detail: `${capitalise(restrictionWords(f.account.restrictedBecause, f.account.platform))}; ${chats(f.pending)} to send, and the run waits until an operator lifts the restriction.`,
    };
  }
  if (f.account.coolingReason === COOLING_NOT_DELIVERING) {
    return {
      reason: 'cooling',
      until: null,
      detail: `The account is not delivering: none of its last sends got a delivery receipt; ${chats(f.pending)} to send, and the run waits until receipts come again or an operator lifts it.`,
    };
  }
  const why =
    f.account.coolingReason === 'flood_waits'
      ? ' after the platform made it wait too often'
      : f.account.coolingReason === 'failures'
        ? ' after too many of its sends failed'
        : '';
  const when = until ? ` until ${localTime(until, f.timezone, now)} (${f.timezone})` : '';
  const closesFirst = until && f.windowEndAt && f.windowEndAt.getTime() <= until.getTime();
  const then = closesFirst ? 'the delivery window closes first, so the run pauses' : 'the run goes on by itself then';
  return { reason: 'cooling', until, detail: `The account is cooling${when}${why}; ${chats(f.pending)} to send, ${then}.` };
}

function explainCap(f: RunFacts, now: Date): Waiting | null {
  if (!f.capFreeAt || f.capFreeAt.getTime() <= now.getTime()) return null;
  const words = `The account sent as many as its hourly or daily cap allows; its next send is at ${localTime(f.capFreeAt, f.timezone, now)}, with ${chats(f.pending)} to send.`;
  return { reason: 'cap', until: f.capFreeAt, detail: withFit(f, now, words) };
}

function explainPace(f: RunFacts, now: Date): Waiting | null {
  if (!f.paceFreeAt || f.paceFreeAt.getTime() <= now.getTime()) return null;
  const words = `${chats(f.pending)} to send at the account's pace of ${paceWords(f.account.perMinute, f.partsPerChat)}; next slot at ${localTime(f.paceFreeAt, f.timezone, now, true)}.`;
  return { reason: 'pace', until: f.paceFreeAt, detail: withFit(f, now, words) };
}

/** Adds how many chats fit when the run cannot finish inside its window at the account's pace. */
export function withFit(f: RunFacts, now: Date, sentence: string): string {
  if (!f.windowEndAt || runEta(f, now) !== null) return sentence;
  const fit = chatsThatFit(f, now);
  return `${sentence.replace(/\.$/, '')}; about ${fit} of the ${chats(f.pending + f.inFlight)} left fit before the window closes at ${localTime(f.windowEndAt, f.timezone, now)}.`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
