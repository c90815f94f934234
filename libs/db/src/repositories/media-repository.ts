import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import type { ListPage } from './run-control-repository.js';

/** A stored media's description (its bytes are only read by senders). */
export interface MediaRow {
  id: string;
  tenantId: string;
  contentType: string;
  size: number;
  sha256: string;
  filename: string | null;
  createdAt: Date;
  cursorAt: string;
}

export interface NewMediaRow {
  tenantId: string;
  contentType: string;
  sha256: string;
  filename: string | null;
  bytes: Buffer;
}

const COLUMNS = [
  'id',
  'tenant_id',
  'content_type',
  'size',
  'sha256',
  'filename',
  'created_at',
  sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
] as const;

function toMedia(m: {
  id: string;
  tenant_id: string;
  content_type: string;
  size: number;
  sha256: string;
  filename: string | null;
  created_at: Date;
  cursor_at: string;
}): MediaRow {
  return {
    id: m.id,
    tenantId: m.tenant_id,
    contentType: m.content_type,
    size: m.size,
    sha256: m.sha256,
    filename: m.filename,
    createdAt: m.created_at,
    cursorAt: m.cursor_at,
  };
}

/** Uploaded media. `tenantId` null means every tenant. */
export class MediaRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async create(m: NewMediaRow): Promise<MediaRow> {
    const row = await this.db
      .insertInto('media')
      .values({ tenant_id: m.tenantId, content_type: m.contentType, size: m.bytes.length, sha256: m.sha256, filename: m.filename, bytes: m.bytes })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return toMedia(row);
  }

  async find(id: string, tenantId: string | null): Promise<MediaRow | null> {
    let query = this.db.selectFrom('media').select(COLUMNS).where('id', '=', id);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const row = await query.executeTakeFirst();
    return row ? toMedia(row) : null;
  }

  async list(tenantId: string | null, page: ListPage): Promise<MediaRow[]> {
    let query = this.db.selectFrom('media').select(COLUMNS);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    if (page.before) query = query.where(sql<boolean>`(created_at, id) < (${page.before.at}::timestamptz, ${page.before.id}::uuid)`);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
    return rows.map(toMedia);
  }

  async sizes(tenantId: string, ids: string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('media').select(['id', 'size']).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, Number(r.size)]));
  }

  /** Which of `ids` are media of `tenantId` (a campaign may only use its own tenant's media). */
  async ownedIds(tenantId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('media').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
    return new Set(rows.map((r) => r.id));
  }
}
