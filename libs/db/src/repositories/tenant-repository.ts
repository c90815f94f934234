import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import type { ListPage } from './run-control-repository.js';

export interface TenantRow {
  id: string;
  name: string;
  createdAt: Date;
}

/** A tenant as the operator's list shows it: never its token hash. */
export interface ListedTenant extends TenantRow {
  cursorAt: string;
}

/** Tenants and their hashed bearer tokens. */
export class TenantRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Creates a tenant; `tokenHash` is the sha256 of its token (the token itself is never stored). */
  async create(name: string, tokenHash: string): Promise<TenantRow> {
    const row = await this.db.insertInto('tenants').values({ name, token_hash: tokenHash }).returning(['id', 'name', 'created_at']).executeTakeFirstOrThrow();
    return { id: row.id, name: row.name, createdAt: row.created_at };
  }

  async findIdByTokenHash(tokenHash: string): Promise<string | null> {
    const row = await this.db.selectFrom('tenants').select('id').where('token_hash', '=', tokenHash).executeTakeFirst();
    return row?.id ?? null;
  }

  async exists(id: string): Promise<boolean> {
    const row = await this.db.selectFrom('tenants').select('id').where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return row !== undefined;
  }

  /** Newest first (tenants are few); never the token hash. */
  async list(page: ListPage): Promise<ListedTenant[]> {
    let query = this.db
      .selectFrom('tenants')
      .select(['id', 'name', 'created_at', sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at')])
      .where('deleted_at', 'is', null);
    if (page.before) query = query.where(sql<boolean>`(created_at, id) < (${page.before.at}::timestamptz, ${page.before.id}::uuid)`);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
    return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at, cursorAt: r.cursor_at }));
  }
}
