import { sql, type Kysely, type UpdateObject } from 'kysely';
import type { DB } from '../types.js';
import type { HealthWrite } from './account-cooling.js';
import { closeStatement, toCloseResult, type CloseRequest, type CloseResult } from './run-closes.js';
import { stampedFirstSend } from './run-repository.js';
import { settleSentStatement, targetKeySql, type SentSettlement } from './settle-sent.js';

export type { SentSettlement } from './settle-sent.js';
export type { CloseRequest, CloseResult } from './run-closes.js';

/** A target of a run: its chat and forum topic (migrations/0039; absent or 0: none). */
export interface TargetRef {
  chatId: string;
  threadId?: number;
}

export interface ClaimedTarget extends TargetRef {
  partsSent: number;
  attempts: number;
  vars?: Record<string, string>;
  /** its last answer's code: tells a target back from a platform's wait (libs/core targetHold) */
  errorCode?: string | null;
  /** sent again to settle a doubtful answer (ambiguous_at set) */
  settling?: boolean;
}

/** How a target leaves `in_flight` other than delivered. Only the lease holder can apply it. */
export type TargetSettlement =
  | {
      status: 'pending';
      nextAttemptAt: Date;
      countAttempt: boolean;
      errorCode: string | null;
      errorMessage: string | null;
      ambiguous?: boolean;
    }
  | { status: 'failed' | 'unknown'; errorCode: string; errorMessage: string; countAttempt: boolean };

export interface ClaimResult {
  settled: Set<string>;
  claimed: ClaimedTarget[];
  firstSend: boolean;
}

export interface ClaimRequest {
  runId: string;
  owner: string;
  sent: SentSettlement[];
  leaseUntil: Date;
  firstSendKnown: boolean;
  /** due targets to take at most; 0 only writes `sent` */
  limit: number;
}

/**
 * The sender's writes to run_targets, each fenced by the lease owner. `send_started_at` is set just before a part's
 * request and cleared by its answer: a lease expiring without it never reached the platform (`unknown` means one thing).
 */
/** One held target's part write (writePartsMany): its send stamped as begun or waiting again, or a delivered part recorded. */
export type PartWrite = { runId: string; target: TargetRef; owner: string } & ({ startedAt: Date | null } | { partsSent: number; messageId: string });

export class TargetSendRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The hot path for several jobs in one round trip: delivered targets written `sent`, up to `limit` due targets of each
   * running run claimed (with `sending`: stamped begun, with the run's first send). Results in the order of `requests`.
   */
  async settleSentAndClaimMany(requests: ClaimRequest[], now: Date, sending: boolean): Promise<ClaimResult[]> {
    const sent = requests.flatMap((r) => r.sent.map((s) => ({ ...s, runId: r.runId, owner: r.owner })));
    // Writes with nothing to do are left out (planning them costs; bench/micro/claim-statement.mjs).
    const stampFirst = sending && requests.some((r) => !r.firstSendKnown);
    const result = await sql<{
      kind: 'settled' | 'claimed' | 'first';
      run_id: string;
      owner: string;
      chat_id: string | null;
      thread_id: number | null;
      target_key: string | null;
      parts_sent: number | null;
      attempts: number | null;
      vars: Record<string, string> | null;
      error_code: string | null;
      settling: boolean | null;
    }>`
      with asked as materialized (
        select * from unnest(
          ${requests.map((r) => r.runId)}::uuid[], ${requests.map((r) => r.owner)}::text[], ${requests.map((r) => r.limit)}::int[],
          ${requests.map((r) => r.leaseUntil.toISOString())}::timestamptz[], ${requests.map((r) => sending && !r.firstSendKnown)}::bool[]
        ) as a(run_id, owner, lim, lease_until, stamp_first)
      ), ${sent.length > 0 ? sql`settled as (${settleSentStatement(sent, now)}),` : sql``} due as materialized (
        -- each run's due targets chosen once, in the order they came due, a few at a time
        select a.run_id, a.owner, a.lease_until, d.row_at
        from asked a cross join lateral (
          select p.ctid as row_at from run_targets p
          where p.run_id = a.run_id and p.status = 'pending' and p.next_attempt_at <= ${now}
            -- the run read by its key alone: with its status in the condition too, a generic plan
            -- may read it through runs_open_idx, every open run's entry for each claim (seen in
            -- throughput's plans: 29 other runs' entries read per claim)
            and (select r.status from runs r where r.id = a.run_id) = 'running'
          -- run_targets_due_idx's order (a chat's topics come due in any order among themselves)
          order by p.next_attempt_at, p.chat_id
          limit a.lim
          for update skip locked
        ) d
      ), claimed as (
        update run_targets t
        set status = 'in_flight', lease_owner = d.owner, lease_expires_at = d.lease_until,
          send_started_at = case when ${sending}::bool then ${now}::timestamptz end, updated_at = ${now}
        -- each row written at the address its lock found (no second descent of the key)
        from due d
        where t.ctid = d.row_at
        returning t.run_id, t.lease_owner as owner, t.chat_id, t.thread_id, t.parts_sent, t.attempts, t.vars, t.error_code, t.next_attempt_at, t.ambiguous_at is not null as settling
      )${
        stampFirst
          ? sql`, ${stampedFirstSend(now, sql`a.stamp_first and r.id = a.run_id and exists (select 1 from claimed c where c.run_id = a.run_id)`, sql`asked a`, sql`r.id, a.owner`)}`
          : sql``
      }
      select 'claimed' as kind, run_id, owner, chat_id, thread_id, null as target_key, parts_sent, attempts, vars, error_code, next_attempt_at, settling from claimed
      ${sent.length > 0 ? sql`union all select 'settled', run_id, owner, chat_id, thread_id, target_key, null, null, null, null, null, null from settled` : sql``}
      ${stampFirst ? sql`union all select 'first', id, owner, null, null, null, null, null, null, null, null, null from first_send` : sql``}
      order by kind, run_id, next_attempt_at, chat_id, thread_id
    `.execute(this.db);
    const job = (runId: string, owner: string) => `${runId} ${owner}`;
    const byJob = new Map(requests.map((r) => [job(r.runId, r.owner), { settled: new Set<string>(), claimed: [] as ClaimedTarget[], firstSend: false }]));
    for (const row of result.rows) {
      const to = byJob.get(job(row.run_id, row.owner))!;
      if (row.kind === 'settled') to.settled.add(row.target_key!);
      else if (row.kind === 'first') to.firstSend = true;
      else {
        const claimed: ClaimedTarget = { chatId: row.chat_id!, partsSent: row.parts_sent ?? 0, attempts: row.attempts ?? 0, errorCode: row.error_code };
        if (row.thread_id) claimed.threadId = row.thread_id;
        if (row.vars !== null) claimed.vars = row.vars;
        if (row.settling) claimed.settling = true;
        to.claimed.push(claimed);
      }
    }
    return requests.map((r) => byJob.get(job(r.runId, r.owner))!);
  }

  /**
   * The job's last write in one statement: delivered targets `sent`, the run's counts, the account's `health`; with
   * `finish`, a run whose every target is sent finished `success`.
   */
  async settleSentAndCount(
    runId: string,
    owner: string,
    sent: SentSettlement[],
    now: Date,
    health: { accountId: string; write: HealthWrite } | null = null,
    finish = false,
  ): Promise<CloseResult> {
    return (await this.settleSentAndCountMany([{ runId, owner, sent, health }], now, finish))[0]!;
  }

  async settleSentAndCountMany(requests: CloseRequest[], now: Date, finish: boolean): Promise<CloseResult[]> {
    const rows = (await closeStatement(requests, now, finish).execute(this.db)).rows;
    const byRun = new Map(rows.map((row) => [row.run_id, row]));
    return requests.map((r) => toCloseResult(byRun.get(r.runId)!));
  }

  /**
   * Several held targets' part writes in one statement, each fenced by its own lease: a send's stamp as begun (`startedAt`),
   * as waiting again (null), or a delivered part (`partsSent`, `messageId`) before the chat's next part. True: still held.
   */
  async writePartsMany(writes: PartWrite[], now: Date): Promise<boolean[]> {
    const recorded = writes.map((w) => ('partsSent' in w ? w : null));
    const rows = await sql<{ i: number }>`
      update run_targets t
         set send_started_at = w.started_at,
             parts_sent = coalesce(w.parts_sent, t.parts_sent),
             message_ids = case when w.message_id is null then t.message_ids else array_append(t.message_ids, w.message_id) end,
             updated_at = ${now}
        from unnest(${writes.map((w) => w.runId)}::uuid[], ${writes.map((w) => w.target.chatId)}::text[],
                    ${writes.map((w) => w.target.threadId ?? 0)}::bigint[], ${writes.map((w) => w.owner)}::text[],
                    ${writes.map((w) => ('startedAt' in w ? w.startedAt : null))}::timestamptz[], ${recorded.map((r) => r?.partsSent ?? null)}::int[],
                    ${recorded.map((r) => r?.messageId ?? null)}::text[]) with ordinality
             as w(run_id, chat_id, thread_id, owner, started_at, parts_sent, message_id, i)
       where t.run_id = w.run_id and t.chat_id = w.chat_id and t.thread_id = w.thread_id and t.lease_owner = w.owner and t.status = 'in_flight'
      returning w.i::int as i`.execute(this.db);
    const held = new Set(rows.rows.map((r) => r.i));
    return writes.map((_, i) => held.has(i + 1));
  }

  /** Typing first: a target claimed ahead of its slot is stamped as sending once typing is over, with the run's first send unless `firstSendKnown`. */
  async markTypedSending(runId: string, target: TargetRef, owner: string, at: Date, firstSendKnown: boolean): Promise<{ owned: boolean; firstSend: boolean }> {
    const result = await sql<{ owned: number; first_send: number }>`
      with held as (
        update run_targets set send_started_at = ${at}, updated_at = ${at}
        where run_id = ${runId} and chat_id = ${target.chatId} and thread_id = ${target.threadId ?? 0} and lease_owner = ${owner} and status = 'in_flight'
        returning 1
      ), ${stampedFirstSend(at, sql`${!firstSendKnown} and r.id = ${runId} and exists (select 1 from held)`, null, sql`1`)}
      select (select count(*) from held)::int as owned, (select count(*) from first_send)::int as first_send`.execute(this.db);
    const row = result.rows[0]!;
    return { owned: row.owned > 0, firstSend: row.first_send > 0 };
  }

  /** Moves a target out of `in_flight` (not delivered), only if `owner` still holds its lease. */
  async settle(runId: string, target: TargetRef, owner: string, s: TargetSettlement, now: Date): Promise<boolean> {
    const common = {
      lease_owner: null,
      lease_expires_at: null,
      send_started_at: null,
      updated_at: now,
      attempts: s.countAttempt ? sql<number>`attempts + 1` : sql<number>`attempts`,
      error_code: s.errorCode,
      error_message: s.errorMessage,
    };
    const patch =
      s.status === 'pending'
        ? {
            ...common,
            status: 'pending' as const,
            next_attempt_at: s.nextAttemptAt,
            ...(s.ambiguous && { ambiguous_at: sql<Date>`coalesce(ambiguous_at, ${now})` }),
          }
        : { ...common, status: s.status };
    return this.updateHeld(runId, target, owner, patch);
  }

  private async updateHeld(runId: string, target: TargetRef, owner: string, patch: UpdateObject<DB, 'run_targets'>): Promise<boolean> {
    const result = await this.db
      .updateTable('run_targets')
      .set(patch)
      .where('run_id', '=', runId)
      .where('chat_id', '=', target.chatId)
      .where('thread_id', '=', target.threadId ?? 0)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'in_flight')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Gives back the targets `owner` holds in this run but `except` (requests written, answers lost), after a lost claim answer. */
  async releaseClaims(runId: string, owner: string, except: string[], now: Date): Promise<number> {
    const result = await this.db
      .updateTable('run_targets')
      .set({ status: 'pending', next_attempt_at: now, lease_owner: null, lease_expires_at: null, send_started_at: null, updated_at: now })
      .where('run_id', '=', runId)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'in_flight')
      .where((eb) => (except.length > 0 ? eb(targetKeySql('run_targets'), 'not in', except) : eb.val(true)))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * The platform moved a chat to a new id (a group became a supergroup): the held target renamed and `pending` again
   * ('moved'), or `skipped` when the new id is a target already ('skipped'); the campaign follows. 'lost': lease lost.
   */
  async moveTarget(
    runId: string,
    campaignId: string,
    target: TargetRef,
    newChatId: string,
    owner: string,
    code: string,
    now: Date,
  ): Promise<'moved' | 'skipped' | 'lost'> {
    const { chatId } = target;
    const threadId = target.threadId ?? 0;
    const message = `chat moved to ${newChatId}`;
    const result = await sql<{ moved: number; skipped: number }>`
      with held as (
        select chat_id, thread_id, exists (select 1 from run_targets o where o.run_id = ${runId} and o.chat_id = ${newChatId} and o.thread_id = ${threadId}) as taken
        from run_targets
        where run_id = ${runId} and chat_id = ${chatId} and thread_id = ${threadId} and lease_owner = ${owner} and status = 'in_flight'
        for update
      ), moved as (
        update run_targets t
        set chat_id = ${newChatId}, status = 'pending', next_attempt_at = least(t.next_attempt_at, ${now}),
          lease_owner = null, lease_expires_at = null, send_started_at = null, error_code = ${code}, error_message = ${`moved from ${chatId}`}, updated_at = ${now}
        from held h
        where t.run_id = ${runId} and t.chat_id = h.chat_id and t.thread_id = h.thread_id and not h.taken
        returning t.chat_id
      ), skipped as (
        update run_targets t
        set status = 'skipped', lease_owner = null, lease_expires_at = null, send_started_at = null, error_code = ${code}, error_message = ${message}, updated_at = ${now}
        from held h
        where t.run_id = ${runId} and t.chat_id = h.chat_id and t.thread_id = h.thread_id and h.taken
        returning t.chat_id
      ), campaign as (
        update campaigns c
        set targets = case when ${newChatId}::text = any(c.targets) then array_remove(c.targets, ${chatId}::text)
          else array_replace(c.targets, ${chatId}::text, ${newChatId}::text) end,
          -- the old id's variables follow it to the new id, unless the new id is a target already (it keeps its own)
          target_vars = case when c.target_vars is null or not c.target_vars ? ${chatId}::text then c.target_vars
            when ${newChatId}::text = any(c.targets) then c.target_vars - ${chatId}::text
            else (c.target_vars - ${chatId}::text) || jsonb_build_object(${newChatId}::text, c.target_vars -> ${chatId}::text) end,
          updated_at = ${now}
        where c.id = ${campaignId} and ${chatId}::text = any(c.targets) and exists (select 1 from held)
          -- removing an id would shift the targets' topics (migrations/0039): such a campaign keeps its list
          and (c.target_threads is null or not ${newChatId}::text = any(c.targets))
        returning c.id
      )
      select (select count(*) from moved)::int as moved, (select count(*) from skipped)::int as skipped,
        (select count(*) from campaign)::int as campaigns
    `.execute(this.db);
    const row = result.rows[0]!;
    return row.moved > 0 ? 'moved' : row.skipped > 0 ? 'skipped' : 'lost';
  }
}
