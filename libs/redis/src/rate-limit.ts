import type { RedisKeys } from './keys.js';
import type { ScriptCommands } from './scripts.js';

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
    return this.scripts.run('rate-limit-1', [this.keys.rateLimit(key)], [now, interval, 60_000 - interval]);
  }
}
