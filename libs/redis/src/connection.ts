import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/** A connection to a single Redis or to a Redis Cluster: every module here accepts either. */
export type RedisClient = Redis | Cluster;

export interface RedisClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
  /** the nodes' `cluster-node-timeout`, ms (Redis' default, 15 s, when absent) */
  nodeTimeoutMs?: number;
}

const DEFAULT_NODE_TIMEOUT_MS = 15_000;
const FAILOVER_RETRY_MS = 200;

/** ioredis' cluster retries sized to ride out a failover (a node timeout, then an election); its defaults fail a command within about a second. */
export function failoverRetries(nodeTimeoutMs = DEFAULT_NODE_TIMEOUT_MS): Partial<ClusterOptions> {
  const rideOutMs = 2 * nodeTimeoutMs + 2_000;
  return {
    retryDelayOnMoved: FAILOVER_RETRY_MS,
    retryDelayOnFailover: FAILOVER_RETRY_MS,
    retryDelayOnClusterDown: FAILOVER_RETRY_MS,
    retryDelayOnTryAgain: FAILOVER_RETRY_MS,
    maxRedirections: Math.ceil((2 * rideOutMs) / FAILOVER_RETRY_MS),
  };
}

export type RedisTarget = string | RedisClusterTarget;

/** A `Redis` for a URL, a `Cluster` for nodes; `maxRetriesPerRequest: null` (BullMQ's need) waits for Redis, and unheard errors print as one JSON line. */
export function createRedis(url: string, name: string, options?: RedisOptions): Redis;
export function createRedis(cluster: RedisClusterTarget, name: string, options?: RedisOptions): Cluster;
export function createRedis(target: RedisTarget, name: string, options?: RedisOptions): RedisClient;
export function createRedis(target: RedisTarget, name: string, options: RedisOptions = {}): RedisClient {
  const nodeOptions: RedisOptions = { maxRetriesPerRequest: null, connectionName: name, lazyConnect: false, ...options };
  const redis: RedisClient = typeof target === 'string' ? new Redis(target, nodeOptions) : new Cluster(target.nodes, clusterOptions(target, nodeOptions));
  const fallback = (error: Error): void => {
    if (redis.listenerCount('error') > 1) return;
    const err = { type: error.name, message: error.message, code: (error as NodeJS.ErrnoException).code };
    process.stderr.write(`${JSON.stringify({ level: 40, time: new Date().toISOString(), connection: name, err, msg: 'redis connection error' })}\n`);
  };
  redis.on('error', fallback);
  return redis;
}

/** A second connection with some options changed; `Cluster#duplicate` takes seed nodes first and the nodes' options under `redisOptions`. */
export function duplicateRedis(redis: RedisClient, options: RedisOptions): RedisClient {
  if (redis instanceof Cluster) {
    return redis.duplicate([], {
      redisOptions: { ...redis.options.redisOptions, ...options },
      ...(options.enableOfflineQueue === undefined ? {} : { enableOfflineQueue: options.enableOfflineQueue }),
    });
  }
  return redis.duplicate(options);
}

function clusterOptions(target: RedisClusterTarget, nodeOptions: RedisOptions): ClusterOptions {
  const { retryStrategy, enableOfflineQueue, lazyConnect, ...perNode } = nodeOptions;
  return {
    ...failoverRetries(target.nodeTimeoutMs),
    lazyConnect,
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) ?? null } : {}),
    redisOptions: {
      ...perNode,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls: {} } : {}),
    },
  };
}

/** Closes within about `timeoutMs` whether or not Redis answers, failing what still waits (a plain quit() waits for Redis; disconnect() strands the queue). */
export async function closeRedis(redis: RedisClient, timeoutMs = 1000): Promise<void> {
  const ended = new Promise<void>((done) => redis.once('end', () => done()));
  if (redis.status === 'ready') void redis.quit().catch(() => undefined);
  else if (redis instanceof Redis) redis.options.retryStrategy = () => null;
  if (redis.status !== 'end') {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise<void>((done) => (timer = setTimeout(done, timeoutMs)))]);
    clearTimeout(timer);
  }
  if (redis.status !== 'end') redis.disconnect();
}
