import { LIVE_RUN_STATUSES } from '@metronome/core';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../types.js';
import { statusList } from './status-sql.js';
import { cancelledRuns, RunRepository } from './run-repository.js';

export type PurgeScope = { accountId: string } | { tenantId: string };

export interface ErasedChat {
  campaigns: number;
  audienceMembers: number;
  targets: number;
  directory: number;
}

/** Deletions an operator asks for (CONTRACT, "Retention and deletion"), large sets in batches. */
export class ErasureRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Deletes the account as the API sees it, in one transaction: secrets, copies, directory and suppressions
   * wiped, campaigns deleted, live runs cancelled. The row stays while its runs are kept.
   */
  async deleteAccount(accountId: string, tenantId: string | null, now: Date): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const found = await sql<{ id: string }>`
        update accounts set deleted_at = ${now}, credentials = null, status = 'disabled',
               -- freed for a new account of the same id; an http account must name one (0001's check)
               external_id = case when platform = 'http' then 'deleted:' || id::text end, updated_at = ${now}
         where id = ${accountId}::uuid and deleted_at is null ${tenantId === null ? sql`` : sql`and tenant_id = ${tenantId}::uuid`}
        returning id`.execute(trx);
      if (found.rows.length === 0) return false;
      for (const table of [
        'whatsapp_auth',
        'whatsapp_sent_messages',
        'chat_directory',
        'chat_directory_syncs',
        'telegram_peers',
        'account_suppressions',
        'media_uploads',
      ] as const) {
        await trx.deleteFrom(table).where('account_id', '=', accountId).execute();
      }
      await sql`
        with c as (
          update campaigns set active = false, deleted_at = coalesce(deleted_at, ${now}), next_run_at = null, updated_at = ${now}
           where account_id = ${accountId}::uuid returning id
        ), ${cancelledRuns(sql`r.account_id = ${accountId}::uuid`, 'account deleted', now)}
        select (select count(*) from c) as campaigns, (select count(*) from r) as runs`.execute(trx);
      return true;
    });
  }

  /** Deletes a media file unless a campaign or live run names it: null when none, else the campaigns in the way. */
  async deleteMedia(mediaId: string, tenantId: string | null): Promise<{ id: string; name: string }[] | null> {
    return this.db.transaction().execute(async (trx) => {
      const found = await sql<{ id: string }>`
        select id from media where id = ${mediaId}::uuid ${tenantId === null ? sql`` : sql`and tenant_id = ${tenantId}::uuid`} for update`.execute(trx);
      if (found.rows.length === 0) return null;
      const part = sql`jsonb_build_array(jsonb_build_object('mediaId', ${mediaId}::text))`;
      const users = await sql<{ id: string; name: string }>`
        select c.id, c.name from campaigns c join media m on m.id = ${mediaId}::uuid and c.tenant_id = m.tenant_id
         where (c.deleted_at is null and c.messages @> ${part})
            or exists (select 1 from runs r where r.campaign_id = c.id and r.status in (${statusList(LIVE_RUN_STATUSES)}) and r.parts @> ${part})
         order by c.name, c.id`.execute(trx);
      if (users.rows.length > 0) return users.rows;
      await trx.deleteFrom('media_uploads').where('media_id', '=', mediaId).execute();
      await trx.deleteFrom('media').where('id', '=', mediaId).execute();
      return [];
    });
  }

  /** One batch of a purge: targets, then events, then runs of the scope; 0 once none is left. */
  async purgeRunsBatch(scope: PurgeScope, batch: number): Promise<{ kind: 'targets' | 'events' | 'runs'; deleted: number }> {
    const runs = runsOf(scope);
    const targets = await sql`
      delete from run_targets where ctid = any(array(
        select t.ctid from (${runs} limit 50) r join run_targets t on t.run_id = r.id limit ${batch}))`.execute(this.db);
    if (Number(targets.numAffectedRows) > 0) return { kind: 'targets', deleted: Number(targets.numAffectedRows) };
    const events = await sql`
      delete from run_events where id = any(array(
        select e.id from (${runs} limit 50) r join run_events e on e.run_id = r.id limit ${batch}))`.execute(this.db);
    if (Number(events.numAffectedRows) > 0) return { kind: 'events', deleted: Number(events.numAffectedRows) };
    return { kind: 'runs', deleted: await new RunRepository(this.db).deleteEmptied(runs, batch) };
  }

  /** After its runs: the account's campaigns and its row (cascading to what 0003–0018 hang on it). */
  async removeAccountRow(accountId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('campaigns').where('account_id', '=', accountId).execute();
      await trx.deleteFrom('media_uploads').where('account_id', '=', accountId).execute();
      await trx.deleteFrom('accounts').where('id', '=', accountId).execute();
    });
  }

  async markTenantDeleted(tenantId: string, now: Date): Promise<boolean> {
    const result = await sql`
      update tenants set deleted_at = ${now}, token_hash = 'deleted:' || id::text
       where id = ${tenantId}::uuid and deleted_at is null`.execute(this.db);
    return Number(result.numAffectedRows) > 0;
  }

  async deletedTenants(): Promise<string[]> {
    const rows = await this.db.selectFrom('tenants').select('id').where('deleted_at', 'is not', null).execute();
    return rows.map((r) => r.id);
  }

  /** One batch of a deleted tenant's other rows (after purgeRunsBatch); 0 once the tenant row is gone. */
  async purgeTenantBatch(tenantId: string, batch: number): Promise<number> {
    const t = sql`${tenantId}::uuid`;
    const steps: RawBuilder<unknown>[] = [
      sql`delete from audience_members where ctid = any(array(
            select m.ctid from audiences a join audience_members m on m.audience_id = a.id where a.tenant_id = ${t} limit ${batch}))`,
      sql`delete from webhook_deliveries where id = any(array(select id from webhook_deliveries where tenant_id = ${t} limit ${batch}))`,
      sql`delete from chat_directory where ctid = any(array(
            select d.ctid from accounts a join chat_directory d on d.account_id = a.id where a.tenant_id = ${t} limit ${batch}))`,
      sql`delete from whatsapp_auth where ctid = any(array(
            select w.ctid from accounts a join whatsapp_auth w on w.account_id = a.id where a.tenant_id = ${t} limit ${batch}))`,
    ];
    for (const step of steps) {
      const result = await step.execute(this.db);
      if (Number(result.numAffectedRows) > 0) return Number(result.numAffectedRows);
    }
    return this.db.transaction().execute(async (trx) => {
      await sql`delete from media_uploads u using accounts a where u.account_id = a.id and a.tenant_id = ${t}`.execute(trx);
      await sql`delete from campaigns where tenant_id = ${t}`.execute(trx);
      await sql`delete from audiences where tenant_id = ${t}`.execute(trx);
      await sql`delete from webhooks where tenant_id = ${t}`.execute(trx);
      await sql`delete from media where tenant_id = ${t}`.execute(trx);
      await sql`delete from accounts where tenant_id = ${t}`.execute(trx);
      const gone = await sql`delete from tenants where id = ${t} and deleted_at is not null`.execute(trx);
      return Number(gone.numAffectedRows) > 0 ? 1 : 0;
    });
  }

  /** Erases a chat from a tenant in one transaction; only its salted hash stays, for the sender's suppression check. */
  async eraseChat(tenantId: string, chatId: string, now: Date): Promise<ErasedChat> {
    return this.db.transaction().execute(async (trx) => {
      await sql`
        insert into erased_chats (tenant_id, chat_hash, created_at)
        select id, sha256(chat_salt || convert_to(${chatId}, 'UTF8')), ${now} from tenants where id = ${tenantId}::uuid
        on conflict do nothing`.execute(trx);
      const campaigns = await sql`
        update campaigns c set
          -- every target of the chat, in any topic; target_threads stays parallel to targets (migrations/0039)
          targets = array(select t.chat_id from unnest(c.targets) with ordinality as t(chat_id, i) where t.chat_id <> ${chatId} order by t.i),
          target_threads = case when c.target_threads is null then null else
            array(select c.target_threads[t.i] from unnest(c.targets) with ordinality as t(chat_id, i) where t.chat_id <> ${chatId} order by t.i) end,
          target_vars = (select jsonb_object_agg(e.k, e.v) from jsonb_each(c.target_vars) as e(k, v)
            where e.k <> ${chatId} and not starts_with(e.k, ${chatId} || chr(31))),
          updated_at = ${now}
         where c.tenant_id = ${tenantId}::uuid and ${chatId} = any(c.targets)`.execute(trx);
      const members = await sql<{ n: number }>`
        with gone as (
          delete from audience_members m using audiences a
           where a.id = m.audience_id and a.tenant_id = ${tenantId}::uuid and m.chat_id = ${chatId} returning m.audience_id
        ), counted as (
          -- a chat may be a member in several topics (migrations/0039)
          update audiences a set member_count = member_count - g.n, updated_at = ${now}
            from (select audience_id, count(*)::int as n from gone group by audience_id) g where a.id = g.audience_id
        )
        select count(*)::int as n from gone`.execute(trx);
      const targets = await sql`
        delete from run_targets t using runs r where r.id = t.run_id and r.tenant_id = ${tenantId}::uuid and t.chat_id = ${chatId}`.execute(trx);
      const directory = await sql`
        delete from chat_directory d using accounts a where a.id = d.account_id and a.tenant_id = ${tenantId}::uuid and d.chat_id = ${chatId}`.execute(trx);
      await sql`
        delete from telegram_peers p using accounts a where a.id = p.account_id and a.tenant_id = ${tenantId}::uuid and p.chat_id = ${chatId}`.execute(trx);
      await sql`
        delete from account_suppressions s using accounts a where a.id = s.account_id and a.tenant_id = ${tenantId}::uuid and s.chat_id = chat_key(a.platform, ${chatId})`.execute(
        trx,
      );
      return {
        campaigns: Number(campaigns.numAffectedRows),
        audienceMembers: members.rows[0]!.n,
        targets: Number(targets.numAffectedRows),
        directory: Number(directory.numAffectedRows),
      };
    });
  }
}

function runsOf(scope: PurgeScope): RawBuilder<unknown> {
  return 'accountId' in scope
    ? sql`select id from runs where account_id = ${scope.accountId}::uuid`
    : sql`select id from runs where tenant_id = ${scope.tenantId}::uuid`;
}
