import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import type { ListPage } from './run-control-repository.js';

export interface AudienceRow {
  id: string;
  tenantId: string;
  name: string;
  memberCount: number;
  createdAt: Date;
  updatedAt: Date;
  cursorAt: string;
}

/** A live campaign naming an audience (what keeps it from being deleted). */
export interface NamingCampaign {
  id: string;
  name: string;
}

/** What `delete` did: deleted, not found, or refused because live campaigns name the audience. */
export type AudienceDeletion = { deleted: true } | { deleted: false; namedBy: NamingCampaign[] };

interface Raw {
  id: string;
  tenant_id: string;
  name: string;
  member_count: number;
  created_at: Date;
  updated_at: Date;
  cursor_at: string;
}

const COLUMNS = sql`a.id, a.tenant_id, a.name, a.member_count, a.created_at, a.updated_at,
  to_char(a.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`;

function toAudience(a: Raw): AudienceRow {
  return {
    id: a.id,
    tenantId: a.tenant_id,
    name: a.name,
    memberCount: a.member_count,
    createdAt: a.created_at,
    updatedAt: a.updated_at,
    cursorAt: a.cursor_at,
  };
}

function scope(tenantId: string | null) {
  return tenantId === null ? sql`true` : sql`a.tenant_id = ${tenantId}::uuid`;
}

/** The unique index that keeps an audience's name one per tenant (the API answers 409). */
export const AUDIENCE_NAME_INDEX = 'audiences_tenant_name_key';

/** Tenants' audiences (migrations/0015), `tenantId` null: every tenant. Members: AudienceMemberRepository. */
export class AudienceRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async create(tenantId: string, name: string, now: Date): Promise<AudienceRow> {
    const result = await sql<Raw>`
      insert into audiences as a (tenant_id, name, created_at, updated_at) values (${tenantId}::uuid, ${name}, ${now}, ${now})
      returning ${COLUMNS}`.execute(this.db);
    return toAudience(result.rows[0]!);
  }

  async list(tenantId: string | null, page: ListPage): Promise<AudienceRow[]> {
    const before = page.before ? sql`and (a.created_at, a.id) < (${page.before.at}::timestamptz, ${page.before.id}::uuid)` : sql``;
    const result = await sql<Raw>`
      select ${COLUMNS} from audiences a where ${scope(tenantId)} ${before}
      order by a.created_at desc, a.id desc limit ${page.limit}`.execute(this.db);
    return result.rows.map(toAudience);
  }

  async find(id: string, tenantId: string | null): Promise<AudienceRow | null> {
    const result = await sql<Raw>`select ${COLUMNS} from audiences a where a.id = ${id}::uuid and ${scope(tenantId)}`.execute(this.db);
    const row = result.rows[0];
    return row ? toAudience(row) : null;
  }

  async rename(id: string, tenantId: string | null, name: string, now: Date): Promise<AudienceRow | null> {
    const result = await sql<Raw>`
      update audiences a set name = ${name}, updated_at = ${now}
      where a.id = ${id}::uuid and ${scope(tenantId)}
      returning ${COLUMNS}`.execute(this.db);
    const row = result.rows[0];
    return row ? toAudience(row) : null;
  }

  /** Deletes the audience and members unless live campaigns name it (then up to 20 of them); null when none. Locks first, so a save is seen. */
  async delete(id: string, tenantId: string | null): Promise<AudienceDeletion | null> {
    return this.db.transaction().execute(async (trx) => {
      const locked = await sql`select a.id from audiences a where a.id = ${id}::uuid and ${scope(tenantId)} for update`.execute(trx);
      if (locked.rows.length === 0) return null;
      const naming = await sql<NamingCampaign>`
        select c.id, c.name from campaigns c
        where c.audience_ids @> array[${id}::uuid] and c.deleted_at is null
        order by c.created_at, c.id limit 20`.execute(trx);
      if (naming.rows.length > 0) return { deleted: false, namedBy: naming.rows };
      await sql`delete from audiences where id = ${id}::uuid`.execute(trx);
      return { deleted: true };
    });
  }

  /** Which of `ids` are the tenant's audiences, held until the transaction ends (`for key share`) so a delete waits for the campaign naming them. */
  async ownedIds(tenantId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const result = await sql<{ id: string }>`select id from audiences where tenant_id = ${tenantId}::uuid and id = any(${ids}::uuid[]) for key share`.execute(
      this.db,
    );
    return new Set(result.rows.map((r) => r.id));
  }
}
