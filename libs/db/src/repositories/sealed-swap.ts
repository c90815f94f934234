import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../types.js';

/** One key column of the rows to swap, with each row's value (in the rows' order). */
export interface SwapKey {
  column: string;
  type: 'uuid' | 'text';
  values: string[];
}

/** Re-sealing's compare-and-set for every sealed column, one statement: `column` set to `next` where it still holds `old`. */
export async function swapSealed(
  db: Kysely<DB>,
  table: 'accounts' | 'whatsapp_auth' | 'webhooks',
  column: string,
  keys: SwapKey[],
  old: Buffer[],
  next: Buffer[],
): Promise<number> {
  if (old.length === 0) return 0;
  const arrays: RawBuilder<unknown>[] = [
    ...keys.map((k) => sql`unnest(${k.values}::${sql.raw(k.type)}[]) as ${sql.ref(k.column)}`),
    sql`unnest(${old}::bytea[]) as old`,
    sql`unnest(${next}::bytea[]) as next`,
  ];
  const matches = [...keys.map((k) => sql`t.${sql.ref(k.column)} = v.${sql.ref(k.column)}`), sql`t.${sql.ref(column)} = v.old`];
  const result = await sql`
    update ${sql.table(table)} t set ${sql.ref(column)} = v.next
    from (select ${sql.join(arrays)}) v
    where ${sql.join(matches, sql` and `)}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
