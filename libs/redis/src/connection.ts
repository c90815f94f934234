import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/** A connection to a single Redis or to a Redis Cluster: every module here accepts either. */
export type RedisClient = Redis | Cluster;

/** A Redis Cluster's seed nodes, with the credentials and TLS its nodes share (REDIS_CLUSTER_NODES, parsed). */
export interface RedisClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
  /** the nodes' `cluster-node-timeout`, ms (Redis' default, 15 s, when absent): sizes how long a failover is ridden out */
  nodeTimeoutMs?: number;
}

/** Redis' default `cluster-node-timeout`. */
const DEFAULT_NODE_TIMEOUT_MS = 15_000;
/** How often a command bounced by a failover is sent again. */
const FAILOVER_RETRY_MS = 200;

/**
 * ioredis' cluster retries sized to ride out a failover: a replica takes over about one node
 * timeout (to flag the master failed) plus an election (0.5–1 s and a second per rank) after
 * the master dies, so a command bounced meanwhile (MOVED to the dead master, a closed
 * connection, CLUSTERDOWN) is sent again every FAILOVER_RETRY_MS for 2 × node timeout + 2 s.
 * ioredis counts tries, not time, and a bounce can cost two (MOVED, then the closed
 * connection), each waiting up to the delay: twice the tries. Its defaults (16 tries, MOVED
 * at once) fail a command within about a second.
 */
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

/** Where to connect: a `redis://` / `rediss://` URL for one server, or a cluster's nodes. */
export type RedisTarget = string | RedisClusterTarget;

/**
 * An ioredis connection: a `Redis` for a URL, a `Cluster` for a cluster's nodes (the options
 * then apply to each node's connection, and `retryStrategy` to the cluster's reconnects too).
 * `maxRetriesPerRequest: null` is what BullMQ needs; commands issued while Redis is away wait
 * for it to come back instead of failing at once.
 *
 * ioredis prints an error nobody listens for as a multi-line stack on stderr. Services listen
 * and log through their own logger; as a floor, a connection with no other `error` listener
 * (one a library let go of, or a script's) reports each error as one JSON line instead.
 */
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

/**
 * A second connection to the same Redis with some options changed (e.g. one that fails fast
 * while the shared one waits). `Redis#duplicate` takes options; `Cluster#duplicate` takes seed
 * nodes first, and its nodes' options under `redisOptions`.
 */
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
    // the cluster reconnects as a whole; it follows the same strategy as a single connection
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) ?? null } : {}),
    redisOptions: {
      ...perNode,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls: {} } : {}),
    },
  };
}

/**
 * Closes a connection within about `timeoutMs` whether or not Redis answers, failing whatever
 * still waits on it. Ready: QUIT (commands already sent are answered first). Otherwise (Redis
 * away): no more attempts, the way ioredis gives a connection up, so its next attempt fails every
 * command waiting in its offline queue and ends it. Last, or when neither ended it in time, a
 * disconnect. (A plain quit() waits behind the queued commands for Redis to come back; a plain
 * disconnect() while reconnecting cancels the attempt that would fail them, leaving them
 * waiting for good.)
 */
export async function closeRedis(redis: RedisClient, timeoutMs = 1000): Promise<void> {
  const ended = new Promise<void>((done) => redis.once('end', () => done()));
  if (redis.status === 'ready') void redis.quit().catch(() => undefined);
  // connecting or reconnecting: whichever attempt is next, its failure is the last
  else if (redis instanceof Redis) redis.options.retryStrategy = () => null;
  if (redis.status !== 'end') {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise<void>((done) => (timer = setTimeout(done, timeoutMs)))]);
    clearTimeout(timer);
  }
  if (redis.status !== 'end') redis.disconnect();
}
