import { createHash } from 'node:crypto';
import type pg from 'pg';

/** How many statements one connection keeps prepared; past it, the rest go unprepared (bounded memory). */
export const MAX_PREPARED_PER_CONNECTION = 200;

const names = new Map<string, string>();

/** The name a statement text is prepared under, the same on every connection. */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `m_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    if (names.size >= 4 * MAX_PREPARED_PER_CONNECTION) names.clear();
    names.set(text, name);
  }
  return name;
}

/** How often a connection's plans are dropped, so a generic plan made on small tables does not outlive their growth. */
export const REPLAN_EVERY_MS = 60_000;

/**
 * Makes `client` prepare each parameterised statement once per connection (node-postgres `name`). A statement's result
 * must name its columns (no final `select *`): a migration widening the table would break it. Plans drop every REPLAN_EVERY_MS.
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
          (query('discard plans') as Promise<unknown>).catch(() => undefined);
        }
        return query({ name, text: config, values });
      }
    }
    return query(config, values, callback);
  };
}
