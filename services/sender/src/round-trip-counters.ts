import type { Kysely, KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Redis } from 'ioredis';

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
export function countRedisCommands(redis: Redis, inc: () => void): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    inc();
    return send(...args);
  }) as Redis['sendCommand'];
}
