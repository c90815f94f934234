import { GroupCommit } from '@metronome/core';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isTransientDbError } from '../transient-error.js';
import type { DB } from '../types.js';
import { learnIdentities } from './whatsapp-identities.js';

/** One row of an account's WhatsApp auth state: sealed bytes, or null to delete it. */
export interface WhatsAppAuthWrite {
  kind: string;
  keyId: string;
  sealed: Buffer | null;
  /** a `lid-mapping` row's phone number and LID, copied to `whatsapp_identities` (migrations/0028) */
  identity?: { lid: string; pn: string } | undefined;
}

/** One account's write of rows. */
interface AccountWrite {
  accountId: string;
  rows: WhatsAppAuthWrite[];
  now: Date;
}

/** The row kind and key id that hold an account's credentials. */
export const WHATSAPP_CREDS_KIND = 'creds';

/** WhatsApp auth state as sealed bytes (migrations/0003); sealing and serialisation are the transport's. */
export class WhatsAppAuthRepository {
  /** the writes of every account asked while one statement runs go in the next together (each account writes one at a time) */
  private readonly batches = new GroupCommit<null, { error: unknown } | null, AccountWrite>((_, writes) => this.writeBatch(writes), 2);

  constructor(private readonly db: Kysely<DB>) {}

  /** The sealed credentials, or null when the account has never been paired. */
  async readCreds(accountId: string): Promise<Buffer | null> {
    const row = await this.db
      .selectFrom('whatsapp_auth')
      .select('sealed')
      .where('account_id', '=', accountId)
      .where('kind', '=', WHATSAPP_CREDS_KIND)
      .where('key_id', '=', '')
      .executeTakeFirst();
    return row?.sealed ?? null;
  }

  /** The sealed keys of one kind among `ids` (absent ids are missing from the map), in one statement. */
  async readKeys(accountId: string, kind: string, ids: string[]): Promise<Map<string, Buffer>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('whatsapp_auth')
      .select(['key_id', 'sealed'])
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .where('key_id', '=', sql<string>`any(${ids}::text[])`)
      .execute();
    return new Map(rows.map((r) => [r.key_id, r.sealed]));
  }

  /** The sealed rows among `keys` of any kinds (absent ones are missing), in one statement: a connect's creds and first keys. */
  async readMany(accountId: string, keys: { kind: string; keyId: string }[]): Promise<{ kind: string; keyId: string; sealed: Buffer }[]> {
    if (keys.length === 0) return [];
    const { rows } = await sql<{ kind: string; keyId: string; sealed: Buffer }>`
      select w.kind, w.key_id as "keyId", w.sealed from whatsapp_auth w
      join unnest(${keys.map((k) => k.kind)}::text[], ${keys.map((k) => k.keyId)}::text[]) as k(kind, key_id)
        on w.kind = k.kind and w.key_id = k.key_id
      where w.account_id = ${accountId}::uuid
    `.execute(this.db);
    return rows;
  }

  /** A one-to-one chat's keys by its phone number's user: its LID mapping, device 0's sessions under both names, its privacy token. */
  async readChat(accountId: string, pnUser: string): Promise<{ kind: string; keyId: string; sealed: Buffer }[]> {
    const { rows } = await sql<{ kind: string; keyId: string; sealed: Buffer }>`
      with lid as (
        select split_part(lid, '@', 1) as u from whatsapp_identities
         where account_id = ${accountId}::uuid and pn = ${`${pnUser}@s.whatsapp.net`} limit 1
      ), wanted(kind, key_id) as (
        select 'lid-mapping', ${pnUser}::text
        union all select 'session', ${`${pnUser}.0`}::text
        union all select 'session', u || '_1.0' from lid
        union all select 'tctoken', u || '@lid' from lid
      )
      select w.kind, w.key_id as "keyId", w.sealed from whatsapp_auth w
      join wanted k on w.kind = k.kind and w.key_id = k.key_id
      where w.account_id = ${accountId}::uuid
    `.execute(this.db);
    return rows;
  }

  /**
   * Writes and deletes many rows in one statement: a session and the pre-key it consumed never disagree. Writes without identities
   * share a statement across accounts (one a batch fails for is tried alone); one with identities learns them in its own, no transaction.
   */
  async write(accountId: string, rows: WhatsAppAuthWrite[], now: Date): Promise<void> {
    if (rows.length === 0) return;
    const identities = rows.flatMap((r) => (r.identity ? [r.identity] : []));
    if (identities.length === 0) {
      const failed = await this.batches.ask(null, { accountId, rows, now });
      if (failed) throw failed.error;
      return;
    }
    await learnIdentities(this.db, accountId, identities, now, rowsWritten([{ accountId, rows, now }]));
  }

  private async writeBatch(writes: AccountWrite[]): Promise<({ error: unknown } | null)[]> {
    try {
      await this.writeRows(this.db, writes);
      return writes.map(() => null);
    } catch (error) {
      if (writes.length === 1 || isTransientDbError(error)) return writes.map(() => ({ error }));
      return Promise.all(
        writes.map((w) =>
          this.writeRows(this.db, [w]).then(
            () => null,
            (e: unknown) => ({ error: e }),
          ),
        ),
      );
    }
  }

  private async writeRows(db: Kysely<DB>, writes: AccountWrite[]): Promise<void> {
    await sql`with ${rowsWritten(writes)} select 1`.execute(db);
  }

  /** Whether a failed write may succeed if tried again. */
  isTransient(error: unknown): boolean {
    return isTransientDbError(error);
  }

  /** An imported session replaces the account's auth state, in one transaction. */
  async replace(accountId: string, rows: WhatsAppAuthWrite[], now: Date): Promise<void> {
    const identities = rows.flatMap((r) => (r.identity ? [r.identity] : []));
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('whatsapp_auth').where('account_id', '=', accountId).execute();
      for (let i = 0; i < rows.length; i += 2_000) await this.writeRows(trx, [{ accountId, rows: rows.slice(i, i + 2_000), now }]);
      if (identities.length) await learnIdentities(trx, accountId, identities, now);
    });
  }

  async clear(accountId: string): Promise<void> {
    await this.db.deleteFrom('whatsapp_auth').where('account_id', '=', accountId).execute();
  }
}

/** The writable CTEs that apply `writes`' rows (upserts and deletes), one row per key, the last asked: a statement may not touch a row twice. */
function rowsWritten(writes: AccountWrite[]): RawBuilder<unknown> {
  const rows = [...new Map(writes.flatMap((w) => w.rows.map((r) => [`${w.accountId}\n${r.kind}\n${r.keyId}`, { ...r, w }] as const))).values()];
  return sql`
    auth_input as (
      select * from unnest(${rows.map((r) => r.w.accountId)}::uuid[], ${rows.map((r) => r.kind)}::text[], ${rows.map((r) => r.keyId)}::text[],
                           ${rows.map((r) => r.sealed)}::bytea[], ${rows.map((r) => r.w.now)}::timestamptz[]) as t(account_id, kind, key_id, sealed, at)
    ),
    auth_removed as (
      delete from whatsapp_auth w using auth_input i
      where w.account_id = i.account_id and w.kind = i.kind and w.key_id = i.key_id and i.sealed is null
    ),
    auth_upserted as (
      insert into whatsapp_auth (account_id, kind, key_id, sealed, updated_at)
      select account_id, kind, key_id, sealed, at from auth_input where sealed is not null
      on conflict (account_id, kind, key_id) do update set sealed = excluded.sealed, updated_at = excluded.updated_at
    )`;
}
