import { sql, type RawBuilder } from 'kysely';

/**
 * Whether the account row `alias` may send at `now`: active, and not blocked until later. The
 * one statement of the rule, for the tick's due and held queries and a campaign's create (which
 * answers it for the API's instant start in the insert itself).
 */
export function accountCanSend(alias: string, now: Date): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  return sql<boolean>`(${column('status')} = 'active' and (${column('blocked_until')} is null or ${column('blocked_until')} <= ${now}))`;
}
