import { sql, type RawBuilder } from 'kysely';

/** Whether account row `alias` may send at `now` (active, not blocked): the tick's due and held queries and a campaign's create. */
export function accountCanSend(alias: string, now: Date): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  return sql<boolean>`(${column('status')} = 'active' and (${column('blocked_until')} is null or ${column('blocked_until')} <= ${now}))`;
}
