import type { Kysely, KyselyPlugin } from 'kysely';

// Statements and commands counted in process for the cost figures: pg_stat_statements is not loaded everywhere, and Redis's INFO counts every client.

/** The same database, with `count` called once per statement sent (raw `sql` and transactions included). */
export function countDbStatements<DB>(db: Kysely<DB>, count: () => void): Kysely<DB> {
  // Kysely calls transformQuery once per statement it executes.
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      count();
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return db.withPlugin(plugin);
}

/** Calls `count` for every command written on an ioredis connection (pipelines, scripts and BullMQ's included). */
export function countRedisCommands(redis: object, count: () => void): void {
  // Redis and Cluster both route every command, pipelined or not, through sendCommand
  const target = redis as { sendCommand: (...args: unknown[]) => unknown };
  const send = target.sendCommand.bind(redis);
  target.sendCommand = (...args: unknown[]) => {
    count();
    return send(...args);
  };
}
