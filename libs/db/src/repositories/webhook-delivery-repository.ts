import { sql, type Kysely } from 'kysely';
import type { DB, WebhookDeliveryStatus, WebhookEventType } from '../types.js';

export interface WebhookDeliveryRow {
  id: string;
  seq: string;
  type: WebhookEventType;
  subjectId: string;
  payload: Record<string, unknown>;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  lastHttpStatus: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
}

export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  url: string;
  secret: Buffer;
  payload: Record<string, unknown>;
  attempts: number;
  retryFrom: Date;
}

export interface DeliveryAttempt {
  status: WebhookDeliveryStatus;
  at: Date;
  nextAttemptAt: Date | null;
  httpStatus: number | null;
  error: string | null;
}

const COLUMNS = [
  'id',
  'seq',
  'type',
  'subject_id',
  'payload',
  'status',
  'attempts',
  'next_attempt_at',
  'last_attempt_at',
  'last_http_status',
  'last_error',
  'delivered_at',
  'created_at',
] as const;

type Raw = {
  id: string;
  seq: string;
  type: WebhookEventType;
  subject_id: string;
  payload: Record<string, unknown>;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  last_http_status: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
};

function toDelivery(d: Raw): WebhookDeliveryRow {
  return {
    id: d.id,
    seq: String(d.seq),
    type: d.type,
    subjectId: d.subject_id,
    payload: d.payload,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.next_attempt_at,
    lastAttemptAt: d.last_attempt_at,
    lastHttpStatus: d.last_http_status,
    lastError: d.last_error,
    deliveredAt: d.delivered_at,
    createdAt: d.created_at,
  };
}

/** The webhook outbox (migrations/0008): triggers write its rows with each status change; here they are listed, redelivered, claimed and settled. */
export class WebhookDeliveryRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async list(webhookId: string, beforeSeq: string | null, limit: number): Promise<WebhookDeliveryRow[]> {
    let query = this.db.selectFrom('webhook_deliveries').select(COLUMNS).where('webhook_id', '=', webhookId);
    if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
    const rows = await query.orderBy('seq', 'desc').limit(limit).execute();
    return rows.map(toDelivery);
  }

  /** Makes a delivery pending again at `now` with a new 24 h retry window; null when there is none. */
  async redeliver(webhookId: string, deliveryId: string, now: Date): Promise<WebhookDeliveryRow | null> {
    const row = await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: now, retry_from: null })
      .where('id', '=', deliveryId)
      .where('webhook_id', '=', webhookId)
      .returning(COLUMNS)
      .executeTakeFirst();
    return row ? toDelivery(row) : null;
  }

  /**
   * Takes up to `limit` due deliveries for `owner` until `leaseUntil`: only the earliest pending one per
   * (webhook, run or account), so events stay in order; SKIP LOCKED and the lease keep replicas apart.
   */
  async claim(owner: string, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
    const result = await sql<{
      id: string;
      webhook_id: string;
      url: string;
      secret: Buffer;
      payload: Record<string, unknown>;
      attempts: number;
      retry_from: Date;
    }>`
      with due as (
        select d.id from webhook_deliveries d
          join webhooks w on w.id = d.webhook_id and w.active
         where d.status = 'pending' and d.next_attempt_at <= ${now}
           and (d.lease_until is null or d.lease_until < ${now})
           and not exists (
             select 1 from webhook_deliveries e
              where e.webhook_id = d.webhook_id and e.subject_id = d.subject_id
                and e.status = 'pending' and e.seq < d.seq)
         order by d.next_attempt_at, d.seq
         limit ${limit}
         for update of d skip locked
      )
      update webhook_deliveries d
         set lease_owner = ${owner}, lease_until = ${leaseUntil}, retry_from = coalesce(d.retry_from, ${now})
        from due, webhooks w
       where d.id = due.id and w.id = d.webhook_id
      returning d.id, d.webhook_id, w.url, w.secret, d.payload, d.attempts, d.retry_from`.execute(this.db);
    return result.rows.map((r) => ({
      id: r.id,
      webhookId: r.webhook_id,
      url: r.url,
      secret: r.secret,
      payload: r.payload,
      attempts: r.attempts,
      retryFrom: r.retry_from,
    }));
  }

  async settle(id: string, owner: string, attempt: DeliveryAttempt): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        status: attempt.status,
        attempts: eb('attempts', '+', 1),
        ...(attempt.nextAttemptAt !== null && { next_attempt_at: attempt.nextAttemptAt }),
        last_attempt_at: attempt.at,
        last_http_status: attempt.httpStatus,
        last_error: attempt.error,
        ...(attempt.status === 'delivered' && { delivered_at: attempt.at }),
        lease_owner: null,
        lease_until: null,
      }))
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
