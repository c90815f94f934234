import type { Generated } from 'kysely';
import type { Json, NullableTimestamp } from './shared.js';

export type WebhookEventType = 'run.status' | 'account.status' | 'message.status';
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** migrations/0008_webhooks.sql: a tenant's webhook; `secret` sealed */
export interface WebhooksTable {
  id: Generated<string>;
  tenant_id: string;
  url: string;
  events: WebhookEventType[];
  secret: Buffer;
  active: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** migrations/0008_webhooks.sql: the outbox, one row per (webhook, event) */
export interface WebhookDeliveriesTable {
  id: Generated<string>;
  seq: Generated<string>;
  webhook_id: string;
  tenant_id: string;
  type: WebhookEventType;
  subject_id: string;
  payload: Json<Record<string, unknown>>;
  status: Generated<WebhookDeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  retry_from: NullableTimestamp;
  lease_owner: string | null;
  lease_until: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  last_http_status: number | null;
  last_error: string | null;
  delivered_at: NullableTimestamp;
  created_at: Generated<Date>;
}
