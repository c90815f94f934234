import type { RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/**
 * WhatsApp accounts' recipients' device lists, shared by the replicas as a cache: each entry runs out (PX); values are the caller's.
 * Give it a connection that fails a command at once while Redis is away (no offline queue, no retries): a miss, not a wait.
 */
export class DeviceLists {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /** One MGET: in `users`' order, null where none. */
  async get(accountId: string, users: string[]): Promise<(string | null)[]> {
    if (users.length === 0) return [];
    return this.redis.mget(users.map((user) => this.keys.userDevices(accountId, user)));
  }

  /** One pipeline of SET … PX (one slot on a cluster: the keys share the prefix's hash tag). */
  async set(accountId: string, entries: { user: string; value: string }[], ttlMs: number): Promise<void> {
    if (entries.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const { user, value } of entries) pipeline.set(this.keys.userDevices(accountId, user), value, 'PX', ttlMs);
    const failed = (await pipeline.exec())?.find(([error]) => error)?.[0];
    if (failed) throw failed;
  }

  async del(accountId: string, users: string[]): Promise<void> {
    if (users.length === 0) return;
    await this.redis.del(...users.map((user) => this.keys.userDevices(accountId, user)));
  }
}
