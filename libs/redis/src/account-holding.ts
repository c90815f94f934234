import type { RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';
import { rateLimitReplies } from './rate-limit.js';
import type { ScriptCommands } from './scripts.js';

/** A connection lease's holder names its sender: WhatsApp's is the sender's id, telegram_user's adds this suffix. */
export const TELEGRAM_USER_HOLDER_SUFFIX = ':tg';

export function senderOfHolder(holder: string): string {
  return holder.endsWith(TELEGRAM_USER_HOLDER_SUFFIX) ? holder.slice(0, -TELEGRAM_USER_HOLDER_SUFFIX.length) : holder;
}

/**
 * The senders alive now, for spreading always-connected accounts (issue 53): a sorted set of
 * sender ids scored by when each one's heartbeat runs out. The clock is the caller's.
 */
export class SenderRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /** Marks `sender` alive until `now + ttlMs` and answers every sender alive at `now`, in one round trip. */
  async beat(sender: string, now: number, ttlMs: number): Promise<string[]> {
    const key = this.keys.senders;
    const replies = await this.redis
      .multi()
      .zadd(key, now + ttlMs, sender)
      .zremrangebyscore(key, '-inf', now)
      .zrange(key, 0, -1)
      .pexpire(key, ttlMs * 2)
      .exec();
    const live = replies?.[2];
    if (!live || live[0]) throw live?.[0] ?? new Error('the sender registry did not answer');
    return live[1] as string[];
  }

  /** Leaves at once (SIGTERM): the others count without it on their next pass. */
  async leave(sender: string): Promise<void> {
    await this.redis.zrem(this.keys.senders, sender);
  }

  /** Each account's socket lease holder (null: free), in one MGET. */
  async leaseHolders(accountIds: readonly string[]): Promise<(string | null)[]> {
    if (accountIds.length === 0) return [];
    return this.redis.mget(accountIds.map((a) => this.keys.socketLease(a)));
  }
}

/**
 * The cluster-wide pace of opening always-connected accounts' connections: a GCRA of `perSecond`
 * with a burst of `burst`, so a mass drop never reconnects every account at once. 0 when a
 * connection may open now, else the ms to wait.
 */
export class ConnectRate {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
    private readonly perSecond: number,
    readonly burst = 1,
  ) {}

  take(now: number): Promise<number> {
    const interval = 1_000 / this.perSecond;
    return this.scripts.run(rateLimitReplies, [this.keys.accountConnects], [now, interval, interval * (this.burst - 1)]);
  }
}
