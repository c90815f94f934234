export { redisKeys, type RedisKeys } from './keys.js';
export { loadScripts, type ScriptCommands } from './scripts.js';
export { AccountLock, type LockResult } from './account-lock.js';
export { AccountPace, type PaceReservation, type ChatPace } from './pace.js';
export { SafePace, type SafeLimits, type SafeReservation } from './safe-pace.js';
export { LeaderLease } from './leader-lease.js';
export { createRedis, duplicateRedis, type RedisClient, type RedisClusterTarget, type RedisTarget } from './connection.js';
export { SocketLeases } from './socket-lease.js';
export { SharedRateLimit } from './rate-limit.js';
