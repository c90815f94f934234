// Loaded by jest before each integration test file (setupFilesAfterEnv): notes every PostgreSQL
// and Redis connection the file opens, so leak-environment.mjs can fail the file when one is still
// open after its last afterAll.
//
// Why wrap the clients' connect rather than ask the servers (pg_stat_activity, CLIENT LIST): test
// files run in parallel workers against one PostgreSQL and one Redis, under the same
// application and connection names, and each file drops its database WITH (FORCE), which would
// close a leaked connection before anyone looked. Only the file's own process knows which
// connections are its own. pg.Pool and Kysely open pg.Client; BullMQ and ioredis's Cluster open
// ioredis Redis: wrapping those two connects sees them all.
import pg from 'pg';
import { Redis } from 'ioredis';

interface Tracked {
  what: string;
  open(): boolean;
}

const tracked: Tracked[] = [];
// read by leak-environment.mjs (the test file's global is the environment's `global`)
(globalThis as Record<string, unknown>)['__metronomeOpenConnections'] = () => tracked.filter((t) => t.open()).map((t) => t.what);

const pgConnect = pg.Client.prototype.connect;
pg.Client.prototype.connect = function (
  this: pg.Client & { _ended?: boolean; connectionParameters?: { database?: string; application_name?: string } },
  ...args: unknown[]
) {
  const params = this.connectionParameters;
  tracked.push({
    what: `PostgreSQL connection to ${params?.database ?? '?'} (${params?.application_name ?? 'no application_name'})`,
    open: () => this._ended !== true,
  });
  return (pgConnect as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pgConnect;

const redisConnect = Redis.prototype.connect;
// connect() runs again on every reconnect: one entry per client
const seenRedis = new WeakSet<Redis>();
Redis.prototype.connect = function (this: Redis, ...args: unknown[]) {
  if (!seenRedis.has(this)) {
    seenRedis.add(this);
    tracked.push({
      what: `Redis connection ${this.options.connectionName ?? '(unnamed)'} to ${this.options.host}:${this.options.port}`,
      open: () => this.status !== 'end',
    });
  }
  return (redisConnect as (...a: unknown[]) => Promise<void>).apply(this, args);
} as typeof redisConnect;
