import type { RunFacts } from './run-facts.js';
import { chatsThatFit, runEta } from './run-eta.js';
import type { SendDelay } from './send-safety.js';
import { chats, localTime } from './waiting-words.js';

/** One limit's answer to "why is it waiting" (limits.ts `Waiting`, with the limit's own reason). */
export interface Held<R extends string = string> {
  reason: R;
  /** when the hold ends, when that is known */
  until: Date | null;
  /** one plain sentence, times in the campaign's timezone */
  detail: string;
}

/** What Redis holds of an account's limits, read by name (libs/redis `readLimitStates`); 0: nothing held. */
export interface LimitState {
  /** the account's GCRA theoretical arrival time, ms */
  paceTat: number;
  /** the earliest next send by the human gap, ms */
  gapAt: number;
  /** when a met hourly or daily cap frees a slot, ms */
  capFreeAt: number;
  locked: boolean;
}

/** The account's limit settings stored generically (accounts.limits): each setting's value under its field. */
export type LimitValues = Readonly<Record<string, unknown>>;

/** An account's limit settings as the gate reads them. */
export interface AccountLimitSettings {
  sendDelaySeconds: SendDelay | null;
  hourlyCap: number | null;
  dailyCap: number | null;
  warmup: { startedAt: Date | string; steps: readonly { afterDays: number; dailyCap: number | null }[] } | null;
  limits?: LimitValues | null;
}

/** A rolling window over the account's messages to one chat, reserved with that chat (libs/redis ChatLimits). */
export interface ChatWindow {
  /** the limit's key: a reservation refused by this window names it (`limitedBy`) */
  key: string;
  count: number;
  windowMs: number;
}

/** A field of an account setting: a whole number or one of a few words. */
export type SettingPart =
  | { name: string; label: string; kind: 'int'; min: number; max: number }
  | { name: string; label: string; kind: 'choice'; values: readonly string[] };

/** The account setting a limit adds: the API's field (create, patch, get) and the console's, built from this. */
export interface LimitSetting {
  field: string;
  label: string;
  hint: string;
  parts: readonly SettingPart[];
}

/** What a hold's sentence reads. */
export type HoldFacts = Pick<RunFacts, 'timezone' | 'everySeconds'> & { account?: Pick<RunFacts['account'], 'newChatHold'> };

/**
 * One limit on an account's sends: how the gate enforces it (its reservation's arguments, what
 * a refusal naming it does), when it frees (read from Redis, the account or the run), and its
 * explanation. `phase`: where the explanation places it (`run` stops every chat before the
 * account's state is told, `connection` and `platform` after it, `due` holds chats due now).
 */
export interface Limit<K extends string = string, R extends string = string> {
  key: K;
  waiting: R | null;
  /** a refusal naming it: only its chat waits (`chat`), or the job ends until it frees (`job`) */
  gate: 'chat' | 'job' | null;
  phase: 'run' | 'connection' | 'platform' | 'due' | null;
  /** a chat it holds keeps its target pending with one of these codes (`hold.codes[0]` by the gate) */
  hold?: { codes: readonly string[]; sentence: (held: string, f: HoldFacts, now: Date) => string };
  setting?: LimitSetting;
  /** the window the gate reserves with each chat, from the account's value of `setting` */
  chatWindow?: (value: unknown) => ChatWindow | null;
  /** when it frees by what Redis holds, ms (0: free), computed as the pace scripts compute it */
  freeAt?: (s: LimitState, pace: { perMinute: number; burst: number }) => number;
  /** the run fact `freeAt` fills */
  fact?: 'paceFreeAt' | 'gapFreeAt' | 'capFreeAt';
  explain?: (f: RunFacts, now: Date) => Held<R> | null;
}

/** A limit, its key and reason kept as literal types. */
export function limit<const K extends string, const R extends string = never>(l: Limit<K, R>): Limit<K, R> {
  return l;
}

/** Adds how many chats fit when the run cannot finish inside its window at the account's pace. */
export function withFit(f: RunFacts, now: Date, sentence: string): string {
  if (!f.windowEndAt || runEta(f, now) !== null) return sentence;
  const fit = chatsThatFit(f, now);
  return `${sentence.replace(/\.$/, '')}; about ${fit} of the ${chats(f.pending + f.inFlight)} left fit before the window closes at ${localTime(f.windowEndAt, f.timezone, now)}.`;
}

export function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
