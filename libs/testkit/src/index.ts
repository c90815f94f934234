export { eventually, GiveUp } from './eventually.js';
export { startService, freePort, byLine, type ServiceProcess } from './processes.js';
export { startStack, apiCall, sandboxGet, scrapeSum, type Stack, type StackOptions } from './stack.js';
export { createScratchDatabase, type ScratchDatabase } from './databases.js';
export { startPrivateRedis, redisAnswers, type PrivateRedis } from './private-redis.js';
export { startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';
export { startPrivateRedisCluster, type PrivateRedisCluster } from './private-redis-cluster.js';
export { startPrismProxy, type PrismProxy, type Violation } from './prism-proxy.js';
