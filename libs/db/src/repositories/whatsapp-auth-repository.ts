import { sql, type Kysely } from 'kysely';
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

/** The row kind and key id that hold an account's credentials. */
export const WHATSAPP_CREDS_KIND = 'creds';

/** WhatsApp auth state as sealed bytes (migrations/0003); sealing and serialisation are the transport's. */
export class WhatsAppAuthRepository {
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

  /** Writes and deletes many rows in one statement: a session and the pre-key it consumed never disagree. */
  async write(accountId: string, rows: WhatsAppAuthWrite[], now: Date): Promise<void> {
    if (rows.length === 0) return;
    const identities = rows.flatMap((r) => (r.identity ? [r.identity] : []));
    if (identities.length === 0) return this.writeRows(this.db, accountId, rows, now);
    await this.db.transaction().execute(async (trx) => {
      await this.writeRows(trx, accountId, rows, now);
      await learnIdentities(trx, accountId, identities, now);
    });
  }

  private async writeRows(db: Kysely<DB>, accountId: string, rows: WhatsAppAuthWrite[], now: Date): Promise<void> {
    const kinds = rows.map((r) => r.kind);
    const ids = rows.map((r) => r.keyId);
    const sealed = rows.map((r) => r.sealed);
    await sql`
      with input as (
        select * from unnest(${kinds}::text[], ${ids}::text[], ${sealed}::bytea[]) as t(kind, key_id, sealed)
      ),
      removed as (
        delete from whatsapp_auth w using input i
        where w.account_id = ${accountId}::uuid and w.kind = i.kind and w.key_id = i.key_id and i.sealed is null
      )
      insert into whatsapp_auth (account_id, kind, key_id, sealed, updated_at)
      select ${accountId}::uuid, kind, key_id, sealed, ${now}::timestamptz from input where sealed is not null
      on conflict (account_id, kind, key_id) do update set sealed = excluded.sealed, updated_at = excluded.updated_at
    `.execute(db);
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
      for (let i = 0; i < rows.length; i += 2_000) await this.writeRows(trx, accountId, rows.slice(i, i + 2_000), now);
      if (identities.length) await learnIdentities(trx, accountId, identities, now);
    });
  }

  async clear(accountId: string): Promise<void> {
    await this.db.deleteFrom('whatsapp_auth').where('account_id', '=', accountId).execute();
  }
}
