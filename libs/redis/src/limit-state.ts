import type { RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

export interface AccountLimitState {
  paceTat: number;
  gapAt: number;
  capFreeAt: number;
  locked: boolean;
}

const READS = {
  paceTat: (k: RedisKeys, id: string) => k.accountPace(id),
  gapAt: (k: RedisKeys, id: string) => k.accountGap(id),
  capFreeAt: (k: RedisKeys, id: string) => k.accountCap(id),
  locked: (k: RedisKeys, id: string) => k.accountLock(id),
} as const;
const FIELDS = Object.keys(READS) as (keyof typeof READS)[];

/** The limit state of each account, in one MGET (the `waiting` view reads it; the pace scripts write it). */
export async function readLimitStates(
  redis: Pick<RedisClient, 'mget'>,
  keys: RedisKeys,
  accountIds: readonly string[],
): Promise<Map<string, AccountLimitState>> {
  const out = new Map<string, AccountLimitState>();
  if (accountIds.length === 0) return out;
  const values = await redis.mget(...accountIds.flatMap((id) => FIELDS.map((f) => READS[f](keys, id))));
  accountIds.forEach((id, i) => {
    const value = (f: keyof typeof READS) => values[i * FIELDS.length + FIELDS.indexOf(f)] ?? null;
    const ms = (f: keyof typeof READS) => Number(value(f) ?? 0) || 0;
    out.set(id, { paceTat: ms('paceTat'), gapAt: ms('gapAt'), capFreeAt: ms('capFreeAt'), locked: value('locked') !== null });
  });
  return out;
}
