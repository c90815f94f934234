import { sql, type Kysely } from 'kysely';
import type { DB, WebhookEventType } from '../types.js';
import type { ListPage } from './run-control-repository.js';
import { swapSealed } from './sealed-swap.js';

/** A webhook without its secret: nothing read here can leak it. */
export interface WebhookRow {
  id: string;
  tenantId: string;
  url: string;
  events: WebhookEventType[];
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
  cursorAt: string;
}

export interface NewWebhookRow {
  tenantId: string;
  url: string;
  events: WebhookEventType[];
  /** sealed; read back only by the deliverer */
  secret: Buffer;
}

export interface WebhookChanges {
  url?: string;
  events?: WebhookEventType[];
  active?: boolean;
}

const COLUMNS = [
  'id',
  'tenant_id',
  'url',
  'events',
  'active',
  'created_at',
  'updated_at',
  sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
] as const;

type Raw = { id: string; tenant_id: string; url: string; events: WebhookEventType[]; active: boolean; created_at: Date; updated_at: Date; cursor_at: string };

function toWebhook(w: Raw): WebhookRow {
  return {
    id: w.id,
    tenantId: w.tenant_id,
    url: w.url,
    events: w.events,
    active: w.active,
    createdAt: w.created_at,
    updatedAt: w.updated_at,
    cursorAt: w.cursor_at,
  };
}

export interface SealedWebhookSecret {
  webhookId: string;
  sealed: Buffer;
}

// Sealed layout (libs/core secrets): version(1) | keyId(4) | …
const secretKeyId = sql<Buffer>`substring(secret from 2 for 4)`;

/** Tenants' webhooks as the API manages them; `tenantId` null: every tenant. */
export class WebhookRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async create(w: NewWebhookRow): Promise<WebhookRow> {
    const row = await this.db
      .insertInto('webhooks')
      .values({ tenant_id: w.tenantId, url: w.url, events: w.events, secret: w.secret })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return toWebhook(row);
  }

  async list(tenantId: string | null, page: ListPage): Promise<WebhookRow[]> {
    let query = this.db.selectFrom('webhooks').select(COLUMNS);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    if (page.before) query = query.where(sql<boolean>`(created_at, id) < (${page.before.at}::timestamptz, ${page.before.id}::uuid)`);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
    return rows.map(toWebhook);
  }

  async find(id: string, tenantId: string | null): Promise<WebhookRow | null> {
    let query = this.db.selectFrom('webhooks').select(COLUMNS).where('id', '=', id);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const row = await query.executeTakeFirst();
    return row ? toWebhook(row) : null;
  }

  async update(id: string, tenantId: string | null, changes: WebhookChanges, now: Date): Promise<WebhookRow | null> {
    let query = this.db
      .updateTable('webhooks')
      .set({
        ...(changes.url !== undefined && { url: changes.url }),
        ...(changes.events !== undefined && { events: changes.events }),
        ...(changes.active !== undefined && { active: changes.active }),
        updated_at: now,
      })
      .where('id', '=', id);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const row = await query.returning(COLUMNS).executeTakeFirst();
    return row ? toWebhook(row) : null;
  }

  /** Deletes the webhook and its pending deliveries; false when none. */
  async delete(id: string, tenantId: string | null): Promise<boolean> {
    let query = this.db.deleteFrom('webhooks').where('id', '=', id);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Secrets not sealed under `keyId`, in id order after `after`. */
  async secretsNotUnder(keyId: Buffer, after: string | null, limit: number): Promise<SealedWebhookSecret[]> {
    let query = this.db.selectFrom('webhooks').select(['id', 'secret']).where(secretKeyId, '<>', keyId);
    if (after !== null) query = query.where('id', '>', after);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ webhookId: r.id, sealed: r.secret }));
  }

  /** Swaps each secret still holding its old value; how many. */
  async replaceSecrets(rows: (SealedWebhookSecret & { next: Buffer })[]): Promise<number> {
    const keys = [{ column: 'id', type: 'uuid' as const, values: rows.map((r) => r.webhookId) }];
    return swapSealed(
      this.db,
      'webhooks',
      'secret',
      keys,
      rows.map((r) => r.sealed),
      rows.map((r) => r.next),
    );
  }
}
