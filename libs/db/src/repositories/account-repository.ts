import type { ProxyShown } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { AccountStatus, AccountTyping, AccountWarmup, DB, Platform } from '../types.js';
import type { ListPage } from './run-control-repository.js';
import { COLUMNS, toAccount, type AccountRow } from './account-rows.js';

export type { AccountRow } from './account-rows.js';
import type { RecentSends } from './send-shapes.js';
import { RunRepository } from './run-repository.js';

/** One run's message to a chat, as PostgreSQL recorded it (ms). */
export interface ChatSendRow {
  chatId: string;
  runId: string;
  at: number;
}

/** A chat the account does not write to again, and why (an error code, or `operator`). */
export interface SuppressionRow {
  chatId: string;
  reason: string;
  createdAt: Date;
}

/** The ban-safety settings, as an account is created or changed with them. */
export interface AccountSafety {
  sendDelaySeconds?: { min: number; max: number } | null;
  hourlyCap?: number | null;
  dailyCap?: number | null;
  warmup?: AccountWarmup | null;
  optOutKeywords?: string[];
  typing?: AccountTyping | null;
  platformDeduplicates?: boolean;
  connection?: 'always' | 'on_demand';
  /** the settings of limits without a column of their own (accounts.limits), by field; null turns one off */
  limits?: Record<string, unknown>;
}

export interface NewAccountRow {
  tenantId: string;
  platform: Platform;
  name: string;
  externalId: string | null;
  /** sealed (libs/core `seal`); never read back by the API */
  credentials: Buffer | null;
  status: AccountStatus;
  maxSendPerMinute: number | null;
  groupConcurrency: number | null;
  safety?: AccountSafety;
  proxy?: ProxyChange;
}

/** A proxy given to an account: the URL sealed, and what is shown of it; null: none. */
export type ProxyChange = { sealed: Buffer; shown: ProxyShown } | null;

export interface AccountChanges extends AccountSafety {
  name?: string;
  status?: AccountStatus;
  maxSendPerMinute?: number | null;
  groupConcurrency?: number | null;
  /** sealed; only ever replaced, never read back by the API */
  credentials?: Buffer;
  /** a new proxy (or none): its last failure is forgotten, and a wait it caused ends */
  proxy?: ProxyChange;
}

/** The columns of the settings given (an absent one is left as it is). */
function safetyColumns(s: AccountSafety, inserted = false) {
  return {
    ...(s.sendDelaySeconds !== undefined && {
      send_delay_min_seconds: s.sendDelaySeconds?.min ?? null,
      send_delay_max_seconds: s.sendDelaySeconds?.max ?? null,
    }),
    ...(s.hourlyCap !== undefined && { hourly_cap: s.hourlyCap }),
    ...(s.dailyCap !== undefined && { daily_cap: s.dailyCap }),
    ...(s.warmup !== undefined && { warmup: s.warmup === null ? null : JSON.stringify(s.warmup) }),
    ...(s.optOutKeywords !== undefined && { opt_out_keywords: s.optOutKeywords }),
    ...(s.typing !== undefined && { typing: s.typing === null ? null : JSON.stringify(s.typing) }),
    ...(s.platformDeduplicates !== undefined && { platform_deduplicates: s.platformDeduplicates }),
    ...(s.connection !== undefined && { connection: s.connection }),
    // a patch merges into what is stored; null drops a setting
    ...(s.limits !== undefined &&
      Object.keys(s.limits).length > 0 && {
        limits: sql<string>`jsonb_strip_nulls(${inserted ? sql`'{}'::jsonb` : sql.ref('accounts.limits')} || ${JSON.stringify(s.limits)}::jsonb)`,
      }),
  };
}

/** The unique index of migrations/0005_account_ownership.sql. */
const EXTERNAL_ID_INDEX = 'accounts_platform_external_id_key';

/** A unique violation (23505) of that index, told apart by the constraint's name, never by message text. */
function isExternalIdTaken(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === EXTERNAL_ID_INDEX;
}

/**
 * Messaging accounts and their suppression lists: as the control API manages them (`tenantId`
 * null means every tenant), and as the sender reads and writes them while it sends (recent
 * sends, flood waits, disconnection, suppressed chats). Cooling: AccountCoolingRepository.
 */
export class AccountRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The new account, or null when another account (of any tenant) already has this
   * (platform, externalId): one platform account belongs to one Metronome account
   * (migrations/0005_account_ownership.sql).
   */
  async create(a: NewAccountRow): Promise<AccountRow | null> {
    const row = await this.db
      .insertInto('accounts')
      .values({
        tenant_id: a.tenantId,
        platform: a.platform,
        name: a.name,
        external_id: a.externalId,
        credentials: a.credentials,
        status: a.status,
        max_send_per_minute: a.maxSendPerMinute,
        group_concurrency: a.groupConcurrency,
        ...safetyColumns(a.safety ?? {}, true),
        ...(a.proxy && { proxy: a.proxy.sealed, proxy_shown: JSON.stringify(a.proxy.shown) }),
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow()
      .catch((error: unknown) => {
        if (isExternalIdTaken(error)) return null;
        throw error;
      });
    return row ? toAccount(row) : null;
  }

  /** Newest first. */
  async list(tenantId: string | null, page: ListPage): Promise<AccountRow[]> {
    let query = this.db.selectFrom('accounts').select(COLUMNS).where('deleted_at', 'is', null);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    if (page.before) query = query.where(sql<boolean>`(created_at, id) < (${page.before.at}::timestamptz, ${page.before.id}::uuid)`);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
    return rows.map(toAccount);
  }

  /** Every tenant's accounts counted by (platform, status), and how many active ones a flood wait blocks at `now`; one query, for the metrics scrape. */
  async countByStatus(now: Date): Promise<{ platform: string; status: AccountStatus; count: number; blocked: number }[]> {
    return this.db
      .selectFrom('accounts')
      .select(['platform', 'status', sql<number>`count(*)::int`.as('count'), sql<number>`(count(*) filter (where blocked_until > ${now}))::int`.as('blocked')])
      .where('deleted_at', 'is', null)
      .groupBy(['platform', 'status'])
      .execute();
  }

  async find(id: string, tenantId: string | null): Promise<AccountRow | null> {
    let query = this.db.selectFrom('accounts').select(COLUMNS).where('id', '=', id).where('deleted_at', 'is', null);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const row = await query.executeTakeFirst();
    return row ? toAccount(row) : null;
  }

  /** Applies `changes`; null when there is no such account for this tenant. */
  async update(id: string, tenantId: string | null, changes: AccountChanges, now: Date): Promise<AccountRow | null> {
    let query = this.db
      .updateTable('accounts')
      .set({
        ...(changes.name !== undefined && { name: changes.name }),
        ...(changes.status !== undefined && { status: changes.status }),
        ...(changes.maxSendPerMinute !== undefined && { max_send_per_minute: changes.maxSendPerMinute }),
        ...(changes.groupConcurrency !== undefined && { group_concurrency: changes.groupConcurrency }),
        ...(changes.credentials !== undefined && { credentials: changes.credentials }),
        ...(changes.proxy !== undefined && {
          proxy: changes.proxy?.sealed ?? null,
          proxy_shown: changes.proxy ? JSON.stringify(changes.proxy.shown) : null,
          proxy_failure: null,
          proxy_failed_at: null,
          // the wait the old proxy's failure set ends: the next attempt uses the new one
          blocked_until: sql<Date | null>`case when proxy_failure is not null then null else blocked_until end`,
        }),
        ...safetyColumns(changes),
        updated_at: now,
      })
      .where('id', '=', id)
      .where('deleted_at', 'is', null);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const row = await query.returning(COLUMNS).executeTakeFirst();
    return row ? toAccount(row) : null;
  }

  /** The account's suppressed chats in chat order, after `afterChat`; the caller checks the account is the tenant's. */
  async suppressions(accountId: string, page: { limit: number; afterChat?: string | undefined }): Promise<SuppressionRow[]> {
    let query = this.db.selectFrom('account_suppressions').select(['chat_id', 'reason', 'created_at']).where('account_id', '=', accountId);
    if (page.afterChat !== undefined) query = query.where('chat_id', '>', page.afterChat);
    const rows = await query.orderBy('chat_id').limit(page.limit).execute();
    return rows.map((r) => ({ chatId: r.chat_id, reason: r.reason, createdAt: r.created_at }));
  }

  /** Adds chats (a telegram_user username by its key: migrations/0044) to the account's suppression list in one statement; returns how many were not on it. */
  async suppress(accountId: string, chatIds: string[], reason: string, now: Date): Promise<number> {
    if (chatIds.length === 0) return 0;
    const result = await sql<{ chat_id: string }>`
      insert into account_suppressions (account_id, chat_id, reason, created_at)
      select a.id, chat_key(a.platform, c), ${reason}, ${now} from accounts a, unnest(${chatIds}::text[]) as c where a.id = ${accountId}::uuid
      on conflict (account_id, chat_id) do nothing
      returning chat_id`.execute(this.db);
    return result.rows.length;
  }

  /** Takes a chat off the list (a telegram_user username in any case); false when it was not on it. */
  async unsuppress(accountId: string, chatId: string): Promise<boolean> {
    const result = await sql`
      delete from account_suppressions s using accounts a
       where a.id = ${accountId}::uuid and s.account_id = a.id and s.chat_id = chat_key(a.platform, ${chatId})`.execute(this.db);
    return Number(result.numAffectedRows) > 0;
  }

  /**
   * The account's requests since `since`, from its runs' targets: a delivered chat counts its
   * parts at `sent_at`; a chat with a request begun or answered and not delivered (failed,
   * unknown, in flight, or waiting to retry) counts its delivered parts and one more, at its
   * latest stamp. Never fewer than the platform received: a send begun by a replica that lost
   * its lock is counted from the moment it was stamped. Runs are found by
   * runs_account_finished_idx (open or finished since), their targets by primary key.
   */
  async recentSends(accountId: string, since: Date): Promise<RecentSends> {
    const rows = await this.db
      .selectFrom('runs as r')
      .innerJoin('run_targets as t', 't.run_id', 'r.id')
      .select([
        sql<Date>`greatest(t.sent_at, t.send_started_at, t.updated_at)`.as('at'),
        sql<number>`(t.parts_sent + case when t.status <> 'sent' and (t.attempts > 0 or t.send_started_at is not null) then 1 else 0 end)::int`.as('n'),
      ])
      .where('r.account_id', '=', accountId)
      .where(sql<boolean>`coalesce(r.finished_at, 'infinity'::timestamptz) >= ${since}`)
      .where(sql<boolean>`greatest(t.sent_at, t.send_started_at, t.updated_at) >= ${since}`)
      .where((eb) => eb.or([eb('t.parts_sent', '>', 0), eb('t.attempts', '>', 0), eb('t.send_started_at', 'is not', null)]))
      .execute();
    const times: number[] = [];
    let lastAt: number | null = null;
    for (const row of rows) {
      const at = row.at.getTime();
      for (let i = 0; i < row.n; i++) times.push(at);
      if (row.n > 0 && (lastAt === null || at > lastAt)) lastAt = at;
    }
    return { times, lastAt };
  }
  /**
   * What each chat got from the account since `since`, one message per run (its target), at its
   * latest stamp: the chat windows' record (libs/core chatWindows), counted as `recentSends` counts.
   */
  async chatSends(accountId: string, since: Date): Promise<ChatSendRow[]> {
    const rows = await this.db
      .selectFrom('runs as r')
      .innerJoin('run_targets as t', 't.run_id', 'r.id')
      .select(['t.chat_id as chatId', 'r.id as runId', sql<Date>`greatest(t.sent_at, t.send_started_at, t.updated_at)`.as('at')])
      .where('r.account_id', '=', accountId)
      .where(sql<boolean>`coalesce(r.finished_at, 'infinity'::timestamptz) >= ${since}`)
      .where(sql<boolean>`greatest(t.sent_at, t.send_started_at, t.updated_at) >= ${since}`)
      .where((eb) => eb.or([eb('t.parts_sent', '>', 0), eb('t.attempts', '>', 0), eb('t.send_started_at', 'is not', null)]))
      .execute();
    return rows.map((r) => ({ chatId: r.chatId, runId: r.runId, at: r.at.getTime() }));
  }

  /**
   * A send the platform refused for good: a chat that answered blocked, kicked, forbidden or not
   * found joins the account's suppression list (`suppress`), and the chat's directory entry, when
   * there is one, cannot send (`reason`, libs/core cannotSendReasonOf). A WhatsApp chat is listed
   * under the person's other identity too, when the account learnt it (phone number ↔ LID,
   * migrations/0028; a pair learnt later carries the listing over); a telegram_user username under
   * its key (migrations/0044). One statement. No entry is created: the directory lists what the
   * platform lists, and a refusal tells no title or kind.
   */
  async chatRefused(accountId: string, chatId: string, code: string, marks: { suppress: boolean; reason: string | null }, now: Date): Promise<void> {
    await sql`
      with listed as (
        insert into account_suppressions (account_id, chat_id, reason, created_at)
        select a.id, c, ${code}, ${now} from accounts a, whatsapp_identity_spellings(a.id, chat_key(a.platform, ${chatId})) c
         where a.id = ${accountId}::uuid and ${marks.suppress}
        on conflict (account_id, chat_id) do nothing
      )
      update chat_directory set can_send = false, cannot_send_reason = ${marks.reason}, updated_at = ${now}
       where ${marks.reason}::text is not null and account_id = ${accountId}::uuid and chat_id = ${chatId}`.execute(this.db);
  }

  /** Persists a flood wait so every replica and the scheduler honour it. Only ever extends. */
  async block(accountId: string, until: Date, now: Date): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set({ blocked_until: sql`greatest(coalesce(blocked_until, ${until}), ${until})`, updated_at: now })
      .where('id', '=', accountId)
      .execute();
  }

  /** The account's proxy URL, sealed (migrations/0035); null: none. Services open it to connect; the API never shows it. */
  async sealedProxy(accountId: string): Promise<Buffer | null> {
    const row = await this.db.selectFrom('accounts').select('proxy').where('id', '=', accountId).executeTakeFirst();
    return row?.proxy ?? null;
  }

  /**
   * Where the account's proxy stands after a connection through it: `failure` (naming the proxy,
   * never its login) when it refused or failed, null when a connection opened. Written only when
   * it changes, and only while the account's proxy is still `proxy` (a PATCH meanwhile wins).
   */
  async proxyState(accountId: string, proxy: Pick<ProxyShown, 'scheme' | 'host' | 'port'>, failure: string | null, now: Date): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set({ proxy_failure: failure, proxy_failed_at: failure === null ? null : now, updated_at: now })
      .where('id', '=', accountId)
      .where(sql<boolean>`proxy_shown @> ${JSON.stringify({ scheme: proxy.scheme, host: proxy.host, port: proxy.port })}::jsonb`)
      .where(sql<boolean>`proxy_failure is distinct from ${failure}`)
      .execute();
  }

  /**
   * A session import begins: the account becomes `pairing` (no run starts on it) unless a run of
   * it is queued or running, in one statement; false then, and nothing changed.
   */
  async holdForSessionImport(accountId: string, now: Date): Promise<boolean> {
    const r = await this.db
      .updateTable('accounts')
      .set({ status: 'pairing', updated_at: now })
      .where('id', '=', accountId)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('runs').select('runs.id').where('runs.account_id', '=', accountId).where('runs.status', 'in', ['queued', 'running']))),
      )
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** The account was logged out or banned: it becomes disconnected and all its open runs pause. */
  async disconnect(accountId: string, reason: string, now: Date): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('accounts').set({ status: 'disconnected', updated_at: now }).where('id', '=', accountId).execute();
      await new RunRepository(trx).pauseOfAccount(accountId, reason, now);
    });
  }
}
