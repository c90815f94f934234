import type { RunFacts } from './run-facts.js';
import { chatsThatFit, runEta } from './run-eta.js';
import type { SendDelay } from './send-safety.js';
import { chats, localTime } from './waiting-words.js';

/** One limit's answer to "why is it waiting" (limits.ts `Waiting`, with the limit's own reason). */
export interface Held<R extends string = string> {
  reason: R;
  until: Date | null;
  detail: string;
}

/** What Redis holds of an account's limits (libs/redis `readLimitStates`): GCRA TAT, gap end, cap end, ms; 0: none. */
export interface LimitState {
  paceTat: number;
  gapAt: number;
  capFreeAt: number;
  locked: boolean;
}

export type LimitValues = Readonly<Record<string, unknown>>;

export interface AccountLimitSettings {
  sendDelaySeconds: SendDelay | null;
  hourlyCap: number | null;
  dailyCap: number | null;
  warmup: { startedAt: Date | string; steps: readonly { afterDays: number; dailyCap: number | null }[] } | null;
  limits?: LimitValues | null;
}

/** A rolling window over the account's messages to one chat, reserved with that chat (libs/redis ChatLimits). */
export interface ChatWindow {
  key: string;
  count: number;
  windowMs: number;
}

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

export type HoldFacts = Pick<RunFacts, 'timezone' | 'everySeconds'> & { account?: Pick<RunFacts['account'], 'newChatHold'> };

/**
 * One limit: `gate` (a refusal holds its chat, put back with `hold.codes[0]`, or ends the job), `chatWindow` (reserved with
 * each chat from `setting`), `freeAt` (its end in Redis, as the pace scripts compute it, into `fact`), `phase`/`explain`.
 */
export interface Limit<K extends string = string, R extends string = string> {
  key: K;
  waiting: R | null;
  gate: 'chat' | 'job' | null;
  phase: 'run' | 'connection' | 'platform' | 'due' | null;
  hold?: { codes: readonly string[]; sentence: (held: string, f: HoldFacts, now: Date) => string };
  setting?: LimitSetting;
  chatWindow?: (value: unknown) => ChatWindow | null;
  freeAt?: (s: LimitState, pace: { perMinute: number; burst: number }) => number;
  fact?: 'paceFreeAt' | 'gapFreeAt' | 'capFreeAt';
  explain?: (f: RunFacts, now: Date) => Held<R> | null;
}

export function limit<const K extends string, const R extends string = never>(l: Limit<K, R>): Limit<K, R> {
  return l;
}

export function withFit(f: RunFacts, now: Date, sentence: string): string {
  if (!f.windowEndAt || runEta(f, now) !== null) return sentence;
  const fit = chatsThatFit(f, now);
  return `${sentence.replace(/\.$/, '')}; about ${fit} of the ${chats(f.pending + f.inFlight)} left fit before the window closes at ${localTime(f.windowEndAt, f.timezone, now)}.`;
}

export function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
