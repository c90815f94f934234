import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import { swapSealed } from './sealed-swap.js';

export interface SealedCredential {
  accountId: string;
  sealed: Buffer;
}

export interface SealedAuthRow {
  accountId: string;
  kind: string;
  keyId: string;
  sealed: Buffer;
}

/** The sealed columns of an account: its credentials, and its proxy (migrations/0035). */
export type AccountSecret = 'credentials' | 'proxy';

/** A value to swap, only while the row still holds `sealed`. */
export type Replacement<T> = T & { next: Buffer };

// Sealed layout (libs/core secrets): version(1) | keyId(4) | …
const keyIdOf = (column: string) => sql<Buffer>`substring(${sql.ref(column)} from 2 for 4)`;

/** Every value sealed with SECRETS_KEY, for re-sealing after a rotation (`npm run reseal`). */
export class SealedSecretsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Credentials (or proxies: `column`) not sealed under the key `keyId`, in account id order after `after`. */
  async credentialsNotUnder(keyId: Buffer, after: string | null, limit: number, column: AccountSecret = 'credentials'): Promise<SealedCredential[]> {
    let query = this.db.selectFrom('accounts').select(['id', column]).where(column, 'is not', null).where(keyIdOf(column), '<>', keyId);
    if (after !== null) query = query.where('id', '>', after);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ accountId: r.id, sealed: (r as Record<AccountSecret, Buffer | null>)[column]! }));
  }

  /** Swaps each credential (or proxy) still holding its old value; how many. */
  async replaceCredentials(rows: Replacement<SealedCredential>[], column: AccountSecret = 'credentials'): Promise<number> {
    const keys = [{ column: 'id', type: 'uuid' as const, values: rows.map((r) => r.accountId) }];
    return swapSealed(
      this.db,
      'accounts',
      column,
      keys,
      rows.map((r) => r.sealed),
      rows.map((r) => r.next),
    );
  }

  async authRowsNotUnder(keyId: Buffer, after: Omit<SealedAuthRow, 'sealed'> | null, limit: number): Promise<SealedAuthRow[]> {
    let query = this.db.selectFrom('whatsapp_auth').select(['account_id', 'kind', 'key_id', 'sealed']).where(keyIdOf('sealed'), '<>', keyId);
    if (after !== null) query = query.where(sql<boolean>`(account_id, kind, key_id) > (${after.accountId}::uuid, ${after.kind}, ${after.keyId})`);
    const rows = await query.orderBy('account_id').orderBy('kind').orderBy('key_id').limit(limit).execute();
    return rows.map((r) => ({ accountId: r.account_id, kind: r.kind, keyId: r.key_id, sealed: r.sealed }));
  }

  async replaceAuthRows(rows: Replacement<SealedAuthRow>[]): Promise<number> {
    const keys = [
      { column: 'account_id', type: 'uuid' as const, values: rows.map((r) => r.accountId) },
      { column: 'kind', type: 'text' as const, values: rows.map((r) => r.kind) },
      { column: 'key_id', type: 'text' as const, values: rows.map((r) => r.keyId) },
    ];
    return swapSealed(
      this.db,
      'whatsapp_auth',
      'sealed',
      keys,
      rows.map((r) => r.sealed),
      rows.map((r) => r.next),
    );
  }
}
