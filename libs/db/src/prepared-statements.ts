import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * How many statements one connection keeps prepared. The hot paths use a few dozen fixed
 * texts; texts that vary (an `in (…)` list of any length) would each be prepared once, so past
 * this many a connection sends the rest unprepared and PostgreSQL's memory stays bounded.
 */
export const MAX_PREPARED_PER_CONNECTION = 200;

// text → name, so a hot statement is hashed once per process, not once per call
const names = new Map<string, string>();

/** The name a statement text is prepared under: the same text, the same name, on every connection. */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `m_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    // texts that vary without end would grow the map without end: start again past a bound
    if (names.size >= 4 * MAX_PREPARED_PER_CONNECTION) names.clear();
    names.set(text, name);
  }
  return name;
}

/**
 * How often a connection's prepared statements are planned afresh. PostgreSQL keeps a generic
 * plan until the tables it reads are analysed again; made while they were small (a service's
 * first minute on a new database), it scans them whole for as long as no ANALYZE comes, which on
 * a server whose autovacuum is off or behind is for good (a run's start read every run:
 * bench/results/HISTORY.md, "plans that outlive a table's growth"). `DISCARD PLANS` drops the plans,
 * not the statements: each is planned again on its next call, from the tables as they are then.
 */
export const REPLAN_EVERY_MS = 60_000;

/**
 * Makes `client` prepare each parameterised statement once and reuse it. Kysely sends every
 * query as an unnamed statement, which PostgreSQL parses and plans again on each call: in the
 * burst of a thousand first runs its planning cost as much as its execution. A named statement
 * is parsed once per connection, and after five executions PostgreSQL keeps a generic plan when
 * it is no worse than a custom one (plan_cache_mode auto), so a query whose best plan depends
 * on its values (a partial index) keeps being planned per call. Statements without parameters
 * (migrations' multi-statement scripts, BEGIN/COMMIT) go through unchanged: a named statement
 * must be a single one. node-postgres has the mechanism (a query's `name`); Kysely's dialect
 * does not expose it, hence this wrapper.
 *
 * One rule follows: a statement's result names its columns. PostgreSQL re-plans a prepared
 * statement after a migration, but refuses one whose result row changed ("cached plan must not
 * change result type"), so a final `select *` or `returning *` on a table a migration widens
 * would fail on every connection that prepared it until the service restarts. (`returning *`
 * inside a CTE whose outer select names its columns is fine.) Every REPLAN_EVERY_MS (`replan`) the
 * connection's plans are dropped, so they follow the tables' growth.
 */
export function prepareStatements(
  client: pg.PoolClient | pg.Client,
  limit = MAX_PREPARED_PER_CONNECTION,
  replan: { everyMs: number; now: () => number } = { everyMs: REPLAN_EVERY_MS, now: Date.now },
): void {
  const names = new Set<string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let plannedAt = replan.now();
  (client as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined) {
      const name = statementName(config);
      if (names.has(name) || names.size < limit) {
        names.add(name);
        const now = replan.now();
        if (now - plannedAt >= replan.everyMs) {
          plannedAt = now;
          // queued ahead of the statement on this connection; a failure shows on the statement
          (query('discard plans') as Promise<unknown>).catch(() => undefined);
        }
        return query({ name, text: config, values });
      }
    }
    return query(config, values, callback);
  };
}
