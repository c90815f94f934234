import { createRedis } from '@metronome/redis';
import { REDIS_URL } from './test-env.js';

/**
 * Deletes every key under one deployment's KEY_PREFIX, as losing Redis would for it (never
 * FLUSHALL: other tests share this Redis). Returns how many keys went.
 */
export async function flushPrefix(prefix: string): Promise<number> {
  const redis = createRedis(REDIS_URL, 'test-flush');
  try {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    await redis.quit();
  }
}
