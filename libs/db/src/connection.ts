import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { prepareStatements } from './prepared-statements.js';
import type { DB } from './types.js';

// bigint (run_events.id, count(*)) arrives as a string by default; our counts fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface DbOptions {
  url: string;
  /** pool size; every service needs only a handful */
  max?: number;
  applicationName?: string;
  /**
   * Plan every statement for the values it is given (PostgreSQL's `plan_cache_mode =
   * force_custom_plan`) rather than keep a generic plan. For a service whose few statements
   * each read many rows (the scheduler's due campaigns, the reconciler's open runs): a generic
   * plan is made once, from the tables' sizes at the time, and kept until the tables are
   * analysed again; made while `runs` was small, the tick's check for an open run scanned all
   * of `runs` for each due campaign. A custom plan costs a few ms of planning, once a tick.
   */
  planEachCall?: boolean;
}

/** A Kysely instance over a pg pool. The caller owns it and calls `destroy()`. */
export function createDb(options: DbOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    // Keep connections once opened. pg's default closes one idle for 10 s, so a sender between
    // two bursts (campaigns every 30 s) reconnected its whole pool at each burst: a new
    // PostgreSQL backend starts with empty caches and re-prepares every statement, on the
    // path of the runs that are due (first-start: 120 sender connections in 3 minutes).
    idleTimeoutMillis: 0,
    application_name: options.applicationName ?? 'metronome',
    ...(options.planEachCall && { options: '-c plan_cache_mode=force_custom_plan' }),
  });
  // An idle client losing its connection (PostgreSQL restart) must not crash the process;
  // the pool replaces it and the next query reports the failure where it can be handled.
  pool.on('error', () => undefined);
  // A connection in use when PostgreSQL goes away also emits 'error'; without a listener that
  // would crash the process. The query on it still fails with its own error.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    prepareStatements(client);
  });
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
