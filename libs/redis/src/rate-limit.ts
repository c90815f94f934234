import type { RedisKeys } from './keys.js';
import { scriptReplies } from './script-replies.js';
import type { ScriptCommands } from './scripts.js';

/** rate-limit-1: 0 when allowed, else the ms to wait */
export const rateLimitReplies = scriptReplies('rate-limit-1', { OK: () => 0, LIMITED: (ms) => ms });

/** Which of two limits taken together refused, and for how long; null when both allowed. */
export type PairRefusal = { limit: 'first' | 'second'; waitMs: number } | null;

/** rate-limit-2: null when both allowed, else the limit that refused (1 or 2) and the ms to wait */
export const rateLimitPairReplies = scriptReplies<PairRefusal>('rate-limit-2', {
  OK: () => null,
  LIMITED: (ms, [which]) => ({ limit: which === 1 ? 'first' : 'second', waitMs: ms }),
});

/** One limit of a pair: its key, its allowance a minute, and whether a request spends from it. */
export interface PairedLimit {
  key: string;
  perMinute: number;
  /** false: the request is refused while the limit is spent out, but spends nothing of it */
  spend: boolean;
}

/**
 * A per-key request limit shared by every replica: GCRA with a burst of one minute's allowance,
 * so a client may spend its `perMinute` at once and then gets one request every 60/perMinute s.
 * Unlike a fixed window, it never allows twice the limit across a window boundary. One script
 * call per request; the clock is passed in.
 */
export class SharedRateLimit {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
  ) {}

  /** Takes one request for `key` at `now`: 0 when allowed, else the milliseconds to wait. */
  take(key: string, now: number, perMinute: number): Promise<number> {
    const interval = 60_000 / perMinute;
    return this.scripts.run(rateLimitReplies, [this.keys.rateLimit(key)], [now, interval, 60_000 - interval]);
  }

  /**
   * Takes one request from two limits in one step: from both, or, when either is spent out,
   * from neither (the first is checked first). One script call instead of two.
   */
  takeBoth(first: PairedLimit, second: Omit<PairedLimit, 'spend'>, now: number): Promise<PairRefusal> {
    const a = 60_000 / first.perMinute;
    const b = 60_000 / second.perMinute;
    return this.scripts.run(
      rateLimitPairReplies,
      [this.keys.rateLimit(first.key), this.keys.rateLimit(second.key)],
      [now, a, 60_000 - a, first.spend ? 1 : 0, b, 60_000 - b],
    );
  }

  /**
   * Gives back one request taken from `key` (taken while it could not yet be told whether it
   * counts, e.g. a token being checked that proves valid): the same script stepping the other
   * way, with no limit on the step. Giving back more than was taken is harmless: an allowance
   * never exceeds a full minute's.
   */
  giveBack(key: string, now: number, perMinute: number): Promise<number> {
    const interval = 60_000 / perMinute;
    return this.scripts.run(rateLimitReplies, [this.keys.rateLimit(key)], [now, -interval, Number.MAX_SAFE_INTEGER]);
  }
}
