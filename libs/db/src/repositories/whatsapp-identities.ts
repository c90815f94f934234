import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../types.js';
import { skipUntouchedTargets } from './skip-suppressed.js';

/**
 * Records learnt (LID, phone number) pairs (migrations/0028) and, in the same statement, carries each identity's
 * suppressions to the other, skipping its untouched targets in open runs as an opt-out does. A known pair changes nothing.
 * `alongside`: more writable CTEs that go in the same statement (all or nothing, without a transaction's round trips).
 */
export async function learnIdentities(
  db: Kysely<DB>,
  accountId: string,
  pairs: { lid: string; pn: string }[],
  now: Date,
  alongside: RawBuilder<unknown> | null = null,
): Promise<void> {
  await sql`
    with ${alongside ? sql`${alongside},` : sql``} learnt as (
      insert into whatsapp_identities (account_id, lid, pn, learnt_at)
      select distinct on (lid) ${accountId}::uuid, lid, pn, ${now}::timestamptz
        from unnest(${sql.val(pairs.map((p) => p.lid))}::text[], ${sql.val(pairs.map((p) => p.pn))}::text[]) as p(lid, pn)
      on conflict (account_id, lid) do update set pn = excluded.pn, learnt_at = excluded.learnt_at
        where whatsapp_identities.pn is distinct from excluded.pn
      returning lid, pn
    ), names as (
      select l.lid as person, unnest(whatsapp_spellings(l.pn) || whatsapp_spellings(l.lid)) as chat_id from learnt l
    ), held as (
      select distinct on (n.person) n.person, s.reason
        from names n join account_suppressions s on s.account_id = ${accountId}::uuid and s.chat_id = n.chat_id
       order by n.person, s.created_at
    ), carried as (
      select n.chat_id, h.reason from names n join held h using (person)
    ), listed as (
      insert into account_suppressions (account_id, chat_id, reason, created_at)
      select ${accountId}::uuid, chat_id, reason, ${now} from carried
      on conflict (account_id, chat_id) do nothing
    )
    ${skipUntouchedTargets(accountId, sql`select chat_id from carried`, now)}`.execute(db);
}
