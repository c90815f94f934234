import type { Kysely } from 'kysely';
import type { DB } from '../types.js';

export interface TenantRow {
  id: string;
  name: string;
  createdAt: Date;
}

/** Tenants and their hashed bearer tokens. */
export class TenantRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Creates a tenant; `tokenHash` is the sha256 of its token (the token itself is never stored). */
  async create(name: string, tokenHash: string): Promise<TenantRow> {
    const row = await this.db
      .insertInto('tenants')
      .values({ name, token_hash: tokenHash })
      .returning(['id', 'name', 'created_at'])
      .executeTakeFirstOrThrow();
    return { id: row.id, name: row.name, createdAt: row.created_at };
  }

  /** The tenant whose token hashes to `tokenHash`, if any. */
  async findIdByTokenHash(tokenHash: string): Promise<string | null> {
    const row = await this.db.selectFrom('tenants').select('id').where('token_hash', '=', tokenHash).executeTakeFirst();
    return row?.id ?? null;
  }

  async exists(id: string): Promise<boolean> {
    const row = await this.db.selectFrom('tenants').select('id').where('id', '=', id).executeTakeFirst();
    return row !== undefined;
  }
}
