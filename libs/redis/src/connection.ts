import { Redis, type RedisOptions } from 'ioredis';

/**
 * An ioredis connection. `maxRetriesPerRequest: null` is what BullMQ needs; commands issued
 * while Redis is away wait for it to come back instead of failing at once.
 *
 * ioredis prints an error nobody listens for as a multi-line stack on stderr. Services listen
 * and log through their own logger; as a floor, a connection with no other `error` listener
 * (one a library let go of, or a script's) reports each error as one JSON line instead.
 */
export function createRedis(url: string, name: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null, connectionName: name, lazyConnect: false, ...options });
  const fallback = (error: Error): void => {
    if (redis.listenerCount('error') > 1) return;
    const err = { type: error.name, message: error.message, code: (error as NodeJS.ErrnoException).code };
    process.stderr.write(`${JSON.stringify({ level: 40, time: new Date().toISOString(), connection: name, err, msg: 'redis connection error' })}\n`);
  };
  redis.on('error', fallback);
  return redis;
}
