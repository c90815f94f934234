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
}

/** A Kysely instance over a pg pool. The caller owns it and calls `destroy()`. */
export function createDb(options: DbOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'metronome',
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
