import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import type { ListPage } from './run-control-repository.js';

/** An audience as the control API shows it. */
export interface AudienceRow {
  id: string;
  tenantId: string;
  name: string;
  memberCount: number;
  createdAt: Date;
  updatedAt: Date;
  cursorAt: string;
}

/** A live campaign that names an audience (what keeps the audience from being deleted). */
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

/**
 * Tenants' audiences (migrations/0015): named, reusable lists of chats. `tenantId` null means
 * every tenant (the admin token). Members are AudienceMemberRepository's.
 */
export class AudienceRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async create(tenantId: string, name: string, now: Date): Promise<AudienceRow> {
    const result = await sql<Raw>`
      insert into audiences as a (tenant_id, name, created_at, updated_at) values (${tenantId}::uuid, ${name}, ${now}, ${now})
      returning ${COLUMNS}`.execute(this.db);
    return toAudience(result.rows[0]!);
  }

  /** Newest first. */
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

  /** Renames; null when there is no such audience for this tenant. */
  async rename(id: string, tenantId: string | null, name: string, now: Date): Promise<AudienceRow | null> {
    const result = await sql<Raw>`
      update audiences a set name = ${name}, updated_at = ${now}
      where a.id = ${id}::uuid and ${scope(tenantId)}
      returning ${COLUMNS}`.execute(this.db);
    const row = result.rows[0];
    return row ? toAudience(row) : null;
  }

  /**
   * Deletes the audience and its members, unless a live campaign names it (then answers those
   * campaigns, at most 20). null when there is no such audience for this tenant.
   *
   * The row is locked first, and the campaigns are read by the next statement: a campaign save
   * that holds the audience (ownedIds, inside its transaction) makes the delete wait for its
   * commit, and the delete then sees that campaign. Read in the delete's own statement, the
   * campaigns would be those of before the wait.
   */
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

  /**
   * Which of `ids` are audiences of `tenantId` (a campaign names only its own tenant's). Inside
   * a transaction they stay held until it ends (`for key share`): a delete waits for the
   * campaign that names them to be saved, and then refuses (see delete).
   */
  async ownedIds(tenantId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const result = await sql<{ id: string }>`select id from audiences where tenant_id = ${tenantId}::uuid and id = any(${ids}::uuid[]) for key share`.execute(
      this.db,
    );
    return new Set(result.rows.map((r) => r.id));
  }
}
