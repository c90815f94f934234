import type { Kysely, KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { RedisClient } from '@metronome/redis';

/**
 * Counts what a send costs in round trips, for `metronome_db_queries_total` and
 * `metronome_redis_commands_total` (the cost benchmark divides them by sends). Counting is a
 * counter increment per statement or command, cheap enough to stay on in production.
 */
export function countDbQueries<DB>(db: Kysely<DB>, inc: () => void): Kysely<DB> {
  // Kysely calls transformQuery once per statement it executes, raw `sql` included.
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      inc();
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return args.result;
    },
  };
  return db.withPlugin(plugin);
}

/** Counts every command sent on an ioredis connection (scripts count as one EVALSHA each). */
export function countRedisCommands(redis: RedisClient, inc: () => void): void {
  // Redis and Cluster both route every command, pipelined or not, through sendCommand
  const target = redis as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const send = target.sendCommand.bind(redis);
  target.sendCommand = (...args: unknown[]) => {
    inc();
    return send(...args);
  };
}
