import { ACCOUNT_RESTRICTED } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

/** An account's health as the sender writes it after a job (libs/core AccountHealth, in columns). */
export interface HealthWrite {
  floodWaits: Date[];
  outcomes: string;
  paceFactor: number;
  paceSince: Date | null;
}

/**
 * The one statement that writes an account's health after a job: alone (recordHealth), or
 * riding on the job's last write (TargetSendRepository.settleSentAndCount), which saves a
 * statement on every job of an account whose record is still filling up.
 */
export function healthStatement(accountId: string, h: HealthWrite, now: Date) {
  return sql`update accounts
    set flood_waits = ${h.floodWaits}::timestamptz[], send_outcomes = ${h.outcomes}, pace_factor = ${h.paceFactor},
      pace_since = ${h.paceSince}::timestamptz, updated_at = ${now}
    where id = ${accountId}`;
}

/** A cooling that begins: the account's status, why and until when, and its lowered pace. */
export interface CoolingStart {
  since: Date;
  until: Date;
  reason: string;
  ms: number;
  paceFactor: number;
  /** when recovery starts counting: the cooling's end */
  paceSince: Date;
}

/** An account whose cooling ended, for the log and the metrics. */
export interface CoolingEnded {
  id: string;
  platform: string;
}

/**
 * Automatic cooling's writes (migrations/0012): the sender records an account's health after a
 * job and cools it, the scheduler's reconciler ends coolings that are due, an operator lifts
 * one. One method, one statement. Status changes notify `account` events and owe
 * `account.status` webhooks through the accounts triggers (migrations/0003, 0008, 0012).
 */
export class AccountCoolingRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Writes the account's recent flood waits, latest outcomes and pace factor. */
  async recordHealth(accountId: string, h: HealthWrite, now: Date): Promise<void> {
    await healthStatement(accountId, h, now).execute(this.db);
  }

  /**
   * An active account becomes `cooling` with its reason and end, its pace lowered, and its
   * health record started afresh (what cooled it is not judged twice). False when the account
   * is no longer active (an operator disabled it meanwhile): nothing changes.
   */
  async cool(accountId: string, c: CoolingStart, now: Date): Promise<boolean> {
    const result = await this.db
      .updateTable('accounts')
      .set({
        status: 'cooling',
        cooling_since: c.since,
        cooling_until: c.until,
        cooling_reason: c.reason,
        last_cooled_at: c.since,
        last_cooling_ms: c.ms,
        pace_factor: c.paceFactor,
        pace_since: c.paceSince,
        flood_waits: [],
        send_outcomes: '',
        updated_at: now,
      })
      .where('id', '=', accountId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * The platform restricted the account (WhatsApp's 463): `cooling`, reason `restricted`, with
   * no end — endDue never ends it, only `lift` does. Replaces an automatic cooling under way.
   * False when the account is neither active nor cooling (disabled, disconnected meanwhile), or
   * already restricted.
   */
  async restrict(accountId: string, now: Date, because: string = ACCOUNT_RESTRICTED): Promise<boolean> {
    const result = await this.db
      .updateTable('accounts')
      .set({ status: 'cooling', cooling_since: now, cooling_until: null, cooling_reason: 'restricted', restricted_because: because, updated_at: now })
      .where('id', '=', accountId)
      .where(sql<boolean>`status = 'active' or (status = 'cooling' and cooling_reason is distinct from 'restricted')`)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Every cooling that is due at `now` ends: the accounts are `active` again (accounts_cooling_until_idx). */
  async endDue(now: Date): Promise<CoolingEnded[]> {
    return this.db
      .updateTable('accounts')
      .set({ status: 'active', cooling_since: null, cooling_until: null, cooling_reason: null, updated_at: now })
      .where('status', '=', 'cooling')
      .where('cooling_until', '<=', now)
      .returning(['id', 'platform'])
      .execute();
  }

  /**
   * An operator ends a cooling now, and WhatsApp's 463 hold on new chats (migrations/0038). The
   * lowered pace stays and recovers from now, as after a cooling that ran out: the operator ends
   * the wait, not the caution. False when the account is neither cooling nor holding new chats
   * (or not the tenant's).
   */
  async lift(accountId: string, tenantId: string | null, now: Date): Promise<boolean> {
    const cooling = sql<boolean>`status = 'cooling'`;
    let query = this.db
      .updateTable('accounts')
      .set({
        status: sql`case when ${cooling} then 'active' else status end`,
        cooling_since: sql`case when ${cooling} then null else cooling_since end`,
        cooling_until: sql`case when ${cooling} then null else cooling_until end`,
        cooling_reason: sql`case when ${cooling} then null else cooling_reason end`,
        restricted_because: sql`case when ${cooling} then null else restricted_because end`,
        pace_since: sql<Date>`case when ${cooling} and pace_factor < 1 then ${now}::timestamptz else pace_since end`,
        new_chats_refused_at: null,
        updated_at: now,
      })
      .where('id', '=', accountId)
      .where(sql<boolean>`(${cooling} or new_chats_refused_at is not null)`);
    if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
