import { OPEN_RUN_STATUSES } from '@metronome/core';
import { sql, type Transaction } from 'kysely';
import type { CatchUpPolicy, DB, MessagePart, Schedule } from '../types.js';
import { accountCanSend } from './account-sql.js';

// The due campaigns as the tick reads them: those that can become runs (also the instant start's query) and those held by their account.

export interface DueCampaign {
  id: string;
  tenantId: string;
  accountId: string;
  name: string;
  timezone: string;
  schedule: Schedule;
  windowStart: string;
  windowEnd: string;
  messages: MessagePart[];
  nextRunAt: Date;
  /** the latest scheduledAt of its scheduled runs, if any */
  lastScheduledAt: Date | null;
  catchUpPolicy: CatchUpPolicy;
  catchUpMaxLatenessSeconds: number | null;
  catchUpThrough: Date | null;
}

/** A due campaign held back because its account cannot send (CONTRACT §4 `no-account`). */
export interface HeldCampaign {
  id: string;
  accountId: string;
  accountStatus: string;
  blockedUntil: Date | null;
  timezone: string;
  schedule: Schedule;
  nextRunAt: Date;
  streak: number;
}

/** Campaigns due at `now` (active, not deleted) with their account, oldest first, locked (another scheduler's tick skips them). */
function due(trx: Transaction<DB>, now: Date, limit: number) {
  return trx
    .selectFrom('campaigns as c')
    .innerJoin('accounts as a', 'a.id', 'c.account_id')
    .where('c.active', '=', true)
    .where('c.deleted_at', 'is', null)
    .where('c.next_run_at', '<=', now)
    .orderBy('c.next_run_at')
    .limit(limit)
    .forUpdate('c')
    .skipLocked();
}

/** Due campaigns that can become runs: an account able to send, no open run (test runs aside). `onlyId`: that campaign alone (the instant start). */
export async function dueCampaigns(trx: Transaction<DB>, now: Date, limit: number, onlyId?: string): Promise<DueCampaign[]> {
  const rows = await due(trx, now, limit)
    .select([
      'c.id',
      'c.tenant_id',
      'c.account_id',
      'c.name',
      'c.timezone',
      'c.schedule',
      'c.window_start',
      'c.window_end',
      'c.messages',
      'c.next_run_at',
      'c.catch_up_policy',
      'c.catch_up_max_lateness_seconds',
      'c.catch_up_through',
      sql<Date | null>`(select max(p.scheduled_at) from runs p where p.campaign_id = c.id and p.trigger = 'schedule')`.as('last_scheduled_at'),
    ])
    .$if(onlyId !== undefined, (q) => q.where('c.id', '=', onlyId!))
    .where(accountCanSend('a', now))
    .where(({ not, exists, selectFrom }) =>
      // a test send's run neither waits for nor holds back the campaign's (migrations/0015)
      not(
        exists(
          selectFrom('runs as r')
            .select('r.id')
            .whereRef('r.campaign_id', '=', 'c.id')
            .where('r.status', 'in', OPEN_RUN_STATUSES)
            .where('r.trigger', '<>', 'test'),
        ),
      ),
    )
    .execute();
  return rows.map((r) => ({
    id: r.id,
    tenantId: r.tenant_id,
    accountId: r.account_id,
    name: r.name,
    timezone: r.timezone,
    schedule: r.schedule,
    windowStart: r.window_start,
    windowEnd: r.window_end,
    messages: r.messages,
    nextRunAt: r.next_run_at!,
    lastScheduledAt: r.last_scheduled_at,
    catchUpPolicy: r.catch_up_policy,
    catchUpMaxLatenessSeconds: r.catch_up_max_lateness_seconds,
    catchUpThrough: r.catch_up_through,
  }));
}

/** Due campaigns whose account cannot send, locked: what the tick counts as `no-account`. */
export async function dueWithoutAccount(trx: Transaction<DB>, now: Date, limit: number): Promise<HeldCampaign[]> {
  const rows = await due(trx, now, limit)
    .select(['c.id', 'c.account_id', 'a.status', 'a.blocked_until', 'c.timezone', 'c.schedule', 'c.next_run_at', 'c.no_account_streak'])
    .where(sql<boolean>`not ${accountCanSend('a', now)}`)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    accountId: r.account_id,
    accountStatus: r.status,
    blockedUntil: r.blocked_until,
    timezone: r.timezone,
    schedule: r.schedule,
    nextRunAt: r.next_run_at!,
    streak: r.no_account_streak,
  }));
}
