import type { RedisClient } from '@metronome/redis';
import type { Kysely, KyselyPlugin } from 'kysely';

// Counting what the scheduler asks of PostgreSQL and Redis, for the cost-per-run figures
// (pg_stat_statements is not loaded on every deployment, and Redis's INFO counts every client).

/** The same database, with `count` called once per statement sent (transactions included). */
export function countDbStatements<DB>(db: Kysely<DB>, count: () => void): Kysely<DB> {
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      count();
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return db.withPlugin(plugin);
}

/** Calls `count` for every command written on `redis` (pipelined and BullMQ's scripts included). */
export function countRedisCommands(redis: RedisClient, count: () => void): void {
  // Redis and Cluster both route every command, pipelined or not, through sendCommand
  const target = redis as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const send = target.sendCommand.bind(redis);
  target.sendCommand = (...args: unknown[]) => {
    count();
    return send(...args);
  };
}
