import type { WebhookDeliveryRow, WebhookRow } from '@metronome/db';
import { z } from 'zod';
import { id, iso, isoOrNull, pageOf, pageQuery, text, time } from './common.js';

export const WEBHOOK_EVENTS = ['run.status', 'account.status', 'message.status'] as const;

const url = text(1, 2048).describe('http or https; its host must be allowed by the operator (WEBHOOK_ALLOWED_HOSTS)');
const events = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1)
  .max(WEBHOOK_EVENTS.length)
  .refine((list) => new Set(list).size === list.length, 'must not repeat an event')
  .describe(
    "run.status: every status change of a run; account.status: of an account; *(extension)* message.status: receipts of a run's messages, batched per run",
  );

export const createWebhookBody = z.strictObject({
  url,
  events,
  tenantId: id.optional().describe('admin only: the tenant that owns the webhook'),
});

export const patchWebhookBody = z.strictObject({
  url: url.optional(),
  events: events.optional(),
  active: z.boolean().optional().describe('false: nothing is owed to this webhook until it is active again; deliveries already owed wait'),
});

export const listWebhooksQuery = z.object({ ...pageQuery });
export const listDeliveriesQuery = z.object({ ...pageQuery });
export const deliveryParams = z.object({ id, deliveryId: id });

export const webhook = z
  .object({
    id,
    tenantId: id,
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    active: z.boolean(),
    createdAt: time,
    updatedAt: time,
  })
  .meta({ id: 'Webhook' });

export const createdWebhook = webhook
  .extend({ secret: z.string().describe('whsec_…: the signing key (Standard Webhooks); shown once, here') })
  .meta({ id: 'CreatedWebhook' });

export const webhookPage = pageOf(webhook);

export const delivery = z
  .object({
    id: id.describe('the webhook-id header: the same on every attempt'),
    type: z.enum(WEBHOOK_EVENTS),
    subjectId: id.describe('the run or account the event is about'),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    httpStatus: z.number().int().nullable().describe("the last attempt's HTTP status; null when it got no answer"),
    error: z.string().nullable().describe('why the last attempt failed; null when it did not'),
    nextAttemptAt: time.nullable().describe('when pending: the next attempt'),
    lastAttemptAt: time.nullable(),
    deliveredAt: time.nullable(),
    createdAt: time,
    payload: z.record(z.string(), z.unknown()).describe('the body sent: {type, timestamp, data}'),
  })
  .meta({ id: 'WebhookDelivery' });

export const deliveryPage = pageOf(delivery);

export function webhookView(w: WebhookRow): z.output<typeof webhook> {
  return { id: w.id, tenantId: w.tenantId, url: w.url, events: w.events, active: w.active, createdAt: iso(w.createdAt), updatedAt: iso(w.updatedAt) };
}

export function deliveryView(d: WebhookDeliveryRow): z.output<typeof delivery> {
  return {
    id: d.id,
    type: d.type,
    subjectId: d.subjectId,
    status: d.status,
    attempts: d.attempts,
    httpStatus: d.lastHttpStatus,
    error: d.lastError,
    nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    lastAttemptAt: isoOrNull(d.lastAttemptAt),
    deliveredAt: isoOrNull(d.deliveredAt),
    createdAt: iso(d.createdAt),
    payload: d.payload,
  };
}
