import { Redis, type RedisOptions } from 'ioredis';

/**
 * An ioredis connection. `maxRetriesPerRequest: null` is what BullMQ needs; commands issued
 * while Redis is away wait for it to come back instead of failing at once.
 */
export function createRedis(url: string, name: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, connectionName: name, lazyConnect: false, ...options });
}
