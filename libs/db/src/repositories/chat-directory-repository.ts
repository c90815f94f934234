import {
  foldForSearch,
  type CannotSendReason,
  type ChatFacts,
  type ChatDirectorySink,
  type ChatKind,
  type DirectoryChat,
  type DirectoryScope,
  type DirectorySyncState,
} from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB, DirectorySyncStatus, Platform } from '../types.js';

export interface DirectoryEntryRow extends DirectoryChat {
  lastSyncAt: Date;
  sortKey: string;
}

/** Which entries, and from where: `after` is the last entry of the previous page. */
export interface DirectoryQuery {
  query?: string | undefined;
  kind?: ChatKind | undefined;
  canSend?: boolean | undefined;
  limit: number;
  after?: { sortKey: string; chatId: string } | undefined;
}

/** Where an account's sync stands, as stored; null status: never synced. */
export interface DirectorySyncRow {
  status: DirectorySyncStatus;
  synced: number;
  size: number;
  until: Date | null;
  reason: string | null;
  lastSyncAt: Date | null;
  requestedAt: Date | null;
}

/** What a sync needs of its account: the credentials stay sealed until the sender opens them. */
export interface SyncAccount {
  id: string;
  platform: Platform;
  externalId: string | null;
  credentials: Buffer | null;
  proxy: Buffer | null;
}

const BATCH = 2_000;
/** Stored titles, and each half of the sort key, are cut to this many code points, so an index entry stays under PostgreSQL's btree limit. */
const MAX_TITLE = 256;
const SEPARATOR = '\u001f';

/** What a search compares and the listing orders by: the folded title, then the folded chat id. */
export function directorySortKey(title: string | null, chatId: string): string {
  return `${cut(foldForSearch(title === null ? '' : cut(title)))}${SEPARATOR}${cut(foldForSearch(chatId))}`;
}

const cut = (text: string): string => (text.length <= MAX_TITLE ? text : [...text].slice(0, MAX_TITLE).join(''));

function containsPattern(text: string): string {
  return `%${foldForSearch(text)
    .replaceAll(SEPARATOR, '')
    .replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The chat directory (migrations/0016): what transports list, what the API lists and searches, and each account's sync state. */
export class ChatDirectoryRepository implements ChatDirectorySink {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * A complete listing in one transaction: every entry upserted, then those it lacks marked `left`
   * (never deleted: runs keep their titles). A `scope` limits it to some kinds.
   */
  async replaceAll(accountId: string, chats: DirectoryChat[], at: Date, scope?: DirectoryScope): Promise<void> {
    const kinds = scope ? scope.kinds : null;
    const unique = distinct(chats);
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < unique.length; i += BATCH) await upsertBatch(trx, accountId, unique.slice(i, i + BATCH), at);
      await sql`
        update chat_directory d
           set can_send = false,
               cannot_send_reason = case when d.can_send then 'left' else d.cannot_send_reason end,
               last_sync_at = ${at}, updated_at = ${at}
         where d.account_id = ${accountId}::uuid
           and (${sql.val(kinds)}::text[] is null or d.kind = any(${sql.val(kinds)}::text[]))
           and not exists (select 1 from unnest(${sql.val(unique.map((c) => c.chatId))}::text[]) as l(id) where l.id = d.chat_id)`.execute(trx);
    });
  }

  /** Entries an event named, added or replaced; the sync's size counts the new ones. */
  async upsert(accountId: string, chats: DirectoryChat[], at: Date): Promise<void> {
    const unique = distinct(chats);
    for (let i = 0; i < unique.length; i += BATCH) await upsertBatch(this.db, accountId, unique.slice(i, i + BATCH), at);
  }

  async patch(accountId: string, chatId: string, change: Partial<Omit<DirectoryChat, 'chatId'>>, at: Date): Promise<void> {
    const reason = change.cannotSendReason ?? null;
    await this.db
      .updateTable('chat_directory')
      .set({
        ...(change.title !== undefined && { title: change.title === null ? null : cut(change.title), title_folded: directorySortKey(change.title, chatId) }),
        ...(change.kind !== undefined && { kind: change.kind }),
        ...(change.memberCount !== undefined && { member_count: change.memberCount }),
        ...(change.canSend !== undefined && {
          can_send: change.canSend,
          cannot_send_reason: change.canSend ? null : sql<string>`coalesce(${reason}::text, cannot_send_reason, 'forbidden')`,
        }),
        ...(change.canSend === undefined &&
          change.cannotSendReason && { cannot_send_reason: sql<string>`case when can_send then null else ${reason}::text end` }),
        last_sync_at: at,
        updated_at: at,
      })
      .where('account_id', '=', accountId)
      .where('chat_id', '=', chatId)
      .execute();
  }

  /** Records where the account's sync stands, with the directory's size counted in the same statement. */
  async syncState(accountId: string, state: DirectorySyncState, at: Date): Promise<void> {
    const synced = state.status === 'syncing' ? state.synced : state.status === 'ok' ? state.size : 0;
    const until = state.status === 'backing_off' ? state.until : null;
    const reason = 'reason' in state ? state.reason : null;
    const lastSyncAt = state.status === 'ok' ? at : null;
    await sql`
      insert into chat_directory_syncs as s (account_id, status, synced, size, until, reason, last_sync_at, updated_at)
      values (${accountId}::uuid, ${state.status}, ${synced}, (select count(*) from chat_directory where account_id = ${accountId}::uuid),
              ${until}, ${reason}, ${lastSyncAt}, ${at})
      on conflict (account_id) do update
         set status = excluded.status, synced = excluded.synced, size = excluded.size, until = excluded.until,
             reason = excluded.reason, last_sync_at = coalesce(excluded.last_sync_at, s.last_sync_at), updated_at = excluded.updated_at`.execute(this.db);
  }

  async requestSync(accountId: string, at: Date): Promise<DirectorySyncRow> {
    const row = await sql<RawSync>`
      insert into chat_directory_syncs as s (account_id, status, synced, size, requested_at, updated_at)
      values (${accountId}::uuid, 'syncing', 0, (select count(*) from chat_directory where account_id = ${accountId}::uuid), ${at}, ${at})
      on conflict (account_id) do update
         set status = 'syncing', synced = 0, size = excluded.size, until = null, reason = null,
             requested_at = excluded.requested_at, updated_at = excluded.updated_at
      returning status, synced, size, until, reason, last_sync_at, requested_at`.execute(this.db);
    return toSync(row.rows[0]!);
  }

  async accountForSync(accountId: string): Promise<SyncAccount | null> {
    const row = await this.db
      .selectFrom('accounts')
      .select(['id', 'platform', 'external_id', 'credentials', 'proxy'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    return row ? { id: row.id, platform: row.platform, externalId: row.external_id, credentials: row.credentials, proxy: row.proxy } : null;
  }

  async syncOf(accountId: string): Promise<DirectorySyncRow | null> {
    const row = await this.db
      .selectFrom('chat_directory_syncs')
      .select(['status', 'synced', 'size', 'until', 'reason', 'last_sync_at', 'requested_at'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row ? toSync(row) : null;
  }

  /** What the directory knows of these chats of the tenant's account (built-ins and titles); others left out. */
  async facts(tenantId: string, accountId: string, chatIds: string[]): Promise<Map<string, ChatFacts>> {
    if (chatIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('chat_directory')
      .innerJoin('accounts', 'accounts.id', 'chat_directory.account_id')
      .select(['chat_directory.chat_id', 'chat_directory.title', 'chat_directory.kind', 'chat_directory.member_count'])
      .where('chat_directory.account_id', '=', accountId)
      .where('accounts.tenant_id', '=', tenantId)
      .where('chat_directory.chat_id', '=', sql<string>`any(${sql.val([...new Set(chatIds)])}::text[])`)
      .execute();
    return new Map(rows.map((r) => [r.chat_id, { title: r.title, kind: r.kind, memberCount: r.member_count }]));
  }

  /** A page of the account's entries in title order, filtered by `query` (any case, accents folded), kind and whether they can send. */
  async list(accountId: string, q: DirectoryQuery): Promise<DirectoryEntryRow[]> {
    let query = this.db
      .selectFrom('chat_directory')
      .select(['chat_id', 'title', 'kind', 'member_count', 'can_send', 'cannot_send_reason', 'last_sync_at', 'title_folded'])
      .where('account_id', '=', accountId);
    if (q.query) query = query.where(sql<boolean>`title_folded like ${containsPattern(q.query)}`);
    if (q.kind) query = query.where('kind', '=', q.kind);
    if (q.canSend !== undefined) query = query.where('can_send', '=', q.canSend);
    if (q.after) query = query.where(sql<boolean>`(title_folded, chat_id) > (${q.after.sortKey}, ${q.after.chatId})`);
    const rows = await query.orderBy('title_folded').orderBy('chat_id').limit(q.limit).execute();
    return rows.map((r) => ({
      chatId: r.chat_id,
      title: r.title,
      kind: r.kind,
      memberCount: r.member_count,
      canSend: r.can_send,
      cannotSendReason: r.cannot_send_reason as CannotSendReason | null,
      lastSyncAt: r.last_sync_at,
      sortKey: r.title_folded,
    }));
  }
}

type RawSync = {
  status: DirectorySyncStatus;
  synced: number;
  size: number;
  until: Date | null;
  reason: string | null;
  last_sync_at: Date | null;
  requested_at: Date | null;
};

function toSync(r: RawSync): DirectorySyncRow {
  return { status: r.status, synced: r.synced, size: r.size, until: r.until, reason: r.reason, lastSyncAt: r.last_sync_at, requestedAt: r.requested_at };
}

/** One entry per chat id (the last wins): one statement may not change a row twice. */
function distinct(chats: DirectoryChat[]): DirectoryChat[] {
  return [...new Map(chats.map((c) => [c.chatId, c])).values()];
}

/** Upserts entries and adds the new ones (`xmax = 0`) to the sync's size, in one statement. */
async function upsertBatch(db: Kysely<DB>, accountId: string, chats: DirectoryChat[], at: Date): Promise<void> {
  if (chats.length === 0) return;
  const column = <T>(f: (c: DirectoryChat) => T) => sql.val(chats.map(f));
  await sql`
    with written as (
      insert into chat_directory as d
        (account_id, chat_id, title, title_folded, kind, member_count, can_send, cannot_send_reason, last_sync_at, updated_at)
      select ${accountId}::uuid, u.chat_id, u.title, u.folded, u.kind, u.member_count, u.can_send,
             case when u.can_send then null else coalesce(u.reason, 'forbidden') end, ${at}, ${at}
        from unnest(${column((c) => c.chatId)}::text[], ${column((c) => (c.title === null ? null : cut(c.title)))}::text[],
                    ${column((c) => directorySortKey(c.title, c.chatId))}::text[], ${column((c) => c.kind)}::text[],
                    ${column((c) => c.memberCount)}::int[], ${column((c) => c.canSend)}::boolean[],
                    ${column((c) => c.cannotSendReason)}::text[])
             as u (chat_id, title, folded, kind, member_count, can_send, reason)
      on conflict (account_id, chat_id) do update
         -- an entry named without a title or member count (a send to a one-to-one chat) keeps the ones it had
         set title = coalesce(excluded.title, d.title),
             title_folded = case when excluded.title is null then d.title_folded else excluded.title_folded end,
             kind = excluded.kind, member_count = coalesce(excluded.member_count, d.member_count), can_send = excluded.can_send,
             cannot_send_reason = excluded.cannot_send_reason, last_sync_at = excluded.last_sync_at,
             updated_at = excluded.updated_at
      returning (xmax = 0) as inserted
    )
    update chat_directory_syncs set size = size + (select count(*) from written where inserted)
     where account_id = ${accountId}::uuid and exists (select 1 from written where inserted)`.execute(db);
}
