import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { prepareStatements } from './prepared-statements.js';
import type { DB } from './types.js';

// bigint (run_events.id, count(*)) arrives as a string; our counts fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface DbOptions {
  url: string;
  max?: number;
  applicationName?: string;
  /** Plan each statement for its values (plan_cache_mode = force_custom_plan): for services whose few statements read many rows. */
  planEachCall?: boolean;
}

/** A Kysely instance over a pg pool. The caller owns it and calls `destroy()`. */
export function createDb(options: DbOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    // Keep idle connections: reconnecting re-prepares every statement on a cold backend, on the due runs' path.
    idleTimeoutMillis: 0,
    application_name: options.applicationName ?? 'metronome',
    ...(options.planEachCall && { options: '-c plan_cache_mode=force_custom_plan' }),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // A busy connection's 'error' too: the query on it fails with its own error.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    prepareStatements(client);
  });
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
