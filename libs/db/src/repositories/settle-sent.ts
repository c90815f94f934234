import { sql } from 'kysely';

/** A target whose last part was delivered, to be written as `sent`. */
export interface SentSettlement {
  chatId: string;
  /** its forum topic; absent or 0: none */
  threadId?: number;
  at: Date;
  latencyMs: number;
  partsSent: number;
  messageId: string;
}

/** A run_targets row's target key (core targetKey) in SQL, `t` its alias. */
export const targetKeySql = (t: string) => sql.raw(`(${t}.chat_id || case when ${t}.thread_id = 0 then '' else chr(31) || ${t}.thread_id::text end)`);

/**
 * The one statement that writes delivered targets `sent`, each fenced by its job's lease; returns their
 * run and target keys. Each target is found on its own (lateral `limit 1`), locked and written by its
 * row's address: a plain join let the planner read all of run_targets_held_idx when statistics were missing.
 */
export function settleSentStatement(sent: (SentSettlement & { runId: string; owner: string })[], now: Date) {
  return sql<{ run_id: string; owner: string; chat_id: string; thread_id: number; target_key: string }>`
      update run_targets t
      set status = 'sent', sent_at = s.at, latency_ms = s.latency_ms, parts_sent = s.parts_sent,
        message_ids = array_append(t.message_ids, s.message_id), attempts = t.attempts + 1,
        error_code = null, error_message = null, lease_owner = null, lease_expires_at = null, send_started_at = null, updated_at = ${now}
      from unnest(
        ${sent.map((x) => x.runId)}::uuid[], ${sent.map((x) => x.owner)}::text[],
        ${sent.map((x) => x.chatId)}::text[], ${sent.map((x) => x.threadId ?? 0)}::bigint[], ${sent.map((x) => x.at.toISOString())}::timestamptz[],
        ${sent.map((x) => x.latencyMs)}::int[], ${sent.map((x) => x.partsSent)}::int[], ${sent.map((x) => x.messageId)}::text[]
      ) as s(run_id, owner, chat_id, thread_id, at, latency_ms, parts_sent, message_id)
      cross join lateral (
        select h.ctid as row_at from run_targets h
        where h.run_id = s.run_id and h.chat_id = s.chat_id and h.thread_id = s.thread_id and h.lease_owner = s.owner and h.status = 'in_flight'
        limit 1
        for update
      ) held
      where t.ctid = held.row_at
      returning t.run_id, s.owner, t.chat_id, t.thread_id, ${targetKeySql('t')} as target_key`;
}
