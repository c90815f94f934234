import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

/** A sealed account credential (`accounts.credentials`). */
export interface SealedCredential {
  accountId: string;
  sealed: Buffer;
}

/** A sealed row of a WhatsApp auth state (`whatsapp_auth`). */
export interface SealedAuthRow {
  accountId: string;
  kind: string;
  keyId: string;
  sealed: Buffer;
}

/** A value to swap: written only if the row still holds `sealed` (a concurrent write wins). */
export type Replacement<T> = T & { next: Buffer };

// Sealed layout (libs/core secrets): version(1) | keyId(4) | …; bytes 2–5 name the key.
const keyIdOf = (column: string) => sql<Buffer>`substring(${sql.ref(column)} from 2 for 4)`;

/**
 * Every value sealed with SECRETS_KEY, for re-sealing them under a new key after a rotation
 * (`npm run reseal`): pages of rows sealed under another key, and compare-and-set swaps.
 */
export class SealedSecretsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Credentials not sealed under the key `keyId`, in account id order after `after`. */
  async credentialsNotUnder(keyId: Buffer, after: string | null, limit: number): Promise<SealedCredential[]> {
    let query = this.db
      .selectFrom('accounts')
      .select(['id', 'credentials'])
      .where('credentials', 'is not', null)
      .where(keyIdOf('credentials'), '<>', keyId);
    if (after !== null) query = query.where('id', '>', after);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ accountId: r.id, sealed: r.credentials! }));
  }

  /** Swaps each credential that still holds its old value; returns how many were swapped. */
  async replaceCredentials(rows: Replacement<SealedCredential>[]): Promise<number> {
    if (rows.length === 0) return 0;
    const result = await sql`
      update accounts a set credentials = v.next
      from (select unnest(${rows.map((r) => r.accountId)}::uuid[]) as id,
                   unnest(${rows.map((r) => r.sealed)}::bytea[]) as old,
                   unnest(${rows.map((r) => r.next)}::bytea[]) as next) v
      where a.id = v.id and a.credentials = v.old`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  /** WhatsApp auth rows not sealed under the key `keyId`, in key order after `after`. */
  async authRowsNotUnder(keyId: Buffer, after: Omit<SealedAuthRow, 'sealed'> | null, limit: number): Promise<SealedAuthRow[]> {
    let query = this.db.selectFrom('whatsapp_auth').select(['account_id', 'kind', 'key_id', 'sealed']).where(keyIdOf('sealed'), '<>', keyId);
    if (after !== null) query = query.where(sql<boolean>`(account_id, kind, key_id) > (${after.accountId}::uuid, ${after.kind}, ${after.keyId})`);
    const rows = await query.orderBy('account_id').orderBy('kind').orderBy('key_id').limit(limit).execute();
    return rows.map((r) => ({ accountId: r.account_id, kind: r.kind, keyId: r.key_id, sealed: r.sealed }));
  }

  /** Swaps each auth row that still holds its old value; returns how many were swapped. */
  async replaceAuthRows(rows: Replacement<SealedAuthRow>[]): Promise<number> {
    if (rows.length === 0) return 0;
    const result = await sql`
      update whatsapp_auth w set sealed = v.next
      from (select unnest(${rows.map((r) => r.accountId)}::uuid[]) as account_id,
                   unnest(${rows.map((r) => r.kind)}::text[]) as kind,
                   unnest(${rows.map((r) => r.keyId)}::text[]) as key_id,
                   unnest(${rows.map((r) => r.sealed)}::bytea[]) as old,
                   unnest(${rows.map((r) => r.next)}::bytea[]) as next) v
      where w.account_id = v.account_id and w.kind = v.kind and w.key_id = v.key_id and w.sealed = v.old`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }
}
