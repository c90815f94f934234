import { newWebhookSecret, seal, webhookUrlVerdict } from '@metronome/core';
import { WebhookDeliveryRepository, WebhookRepository } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ownerFor, scopeOf } from '../caller.js';
import { DEFAULT_WEBHOOK_CONFIG } from '../config.js';
import type { ApiContext } from '../context.js';
import { decodePosition, encodePosition, pageOf } from '../cursor.js';
import { invalidField, notFound } from '../errors.js';
import { errorResponses, idParams } from '../schemas/common.js';
import {
  createdWebhook,
  createWebhookBody,
  deliveryPage,
  deliveryParams,
  deliveryView,
  delivery,
  listDeliveriesQuery,
  listWebhooksQuery,
  patchWebhookBody,
  webhook,
  webhookPage,
  webhookView,
} from '../schemas/webhooks.js';

// A deliveries cursor is the outbox position of the last row shown (base64url JSON, opaque).
const seqCursor = z.strictObject({ seq: z.string().regex(/^[1-9]\d{0,18}$/) });
const encodeSeq = (seq: string): string => Buffer.from(JSON.stringify({ seq }), 'utf8').toString('base64url');
function decodeSeq(cursor: string): string {
  try {
    return seqCursor.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))).seq;
  } catch {
    throw invalidField('cursor', 'not a cursor this API returned');
  }
}

/** Webhooks: signed POSTs of status changes from the outbox. The secret goes in sealed and comes out once. */
export const webhookRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const webhooks = new WebhookRepository(ctx.db);
  const deliveries = new WebhookDeliveryRepository(ctx.db);
  const allowedHosts = (ctx.config.webhooks ?? DEFAULT_WEBHOOK_CONFIG).allowedHosts;
  const checkUrl = (url: string): void => {
    const verdict = webhookUrlVerdict(url, allowedHosts);
    if (!verdict.allowed) throw invalidField('url', verdict.reason);
  };

  app.post(
    '/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Create a webhook; its secret is in this answer only',
        body: createWebhookBody,
        response: { 201: createdWebhook, ...errorResponses() },
      },
    },
    async (req, reply) => {
      const tenantId = ownerFor(req.caller, req.body.tenantId);
      if (req.caller.admin && !(await ctx.tenants.exists(tenantId))) throw invalidField('tenantId', 'no such tenant');
      checkUrl(req.body.url);
      const secret = newWebhookSecret();
      const created = await webhooks.create({ tenantId, url: req.body.url, events: req.body.events, secret: seal(secret, ctx.config.secretsKey) });
      return reply.code(201).send({ ...webhookView(created), secret });
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'List webhooks, newest first',
        querystring: listWebhooksQuery,
        response: { 200: webhookPage, ...errorResponses() },
      },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const rows = await webhooks.list(scopeOf(req.caller), { limit: limit + 1, before });
      const page = pageOf(rows, limit, (w) => encodePosition({ at: w.cursorAt, id: w.id }));
      return { items: page.rows.map(webhookView), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'getWebhook',
        tags: ['webhooks'],
        summary: 'One webhook (never its secret)',
        params: idParams,
        response: { 200: webhook, ...errorResponses(404) },
      },
    },
    async (req) => {
      const found = await webhooks.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('webhook');
      return webhookView(found);
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'updateWebhook',
        tags: ['webhooks'],
        summary: 'Change url, events or active',
        params: idParams,
        body: patchWebhookBody,
        response: { 200: webhook, ...errorResponses(404) },
      },
    },
    async (req) => {
      if (req.body.url !== undefined) checkUrl(req.body.url);
      const updated = await webhooks.update(req.params.id, scopeOf(req.caller), req.body, ctx.now());
      if (!updated) throw notFound('webhook');
      return webhookView(updated);
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Delete a webhook and every delivery still owed to it',
        params: idParams,
        response: { 204: z.undefined().describe('deleted'), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      if (!(await webhooks.delete(req.params.id, scopeOf(req.caller)))) throw notFound('webhook');
      return reply.code(204).send();
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: "A webhook's deliveries, newest first: status, attempts, last HTTP status and error, next attempt",
        params: idParams,
        querystring: listDeliveriesQuery,
        response: { 200: deliveryPage, ...errorResponses(404) },
      },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const before = cursor === undefined ? null : decodeSeq(cursor);
      if (!(await webhooks.find(req.params.id, scopeOf(req.caller)))) throw notFound('webhook');
      const rows = await deliveries.list(req.params.id, before, limit + 1);
      const page = pageOf(rows, limit, (d) => encodeSeq(d.seq));
      return { items: page.rows.map(deliveryView), nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/redeliver',
    {
      schema: {
        operationId: 'redeliverWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Send a delivery again (same webhook-id), now, with a new 24 h of retries',
        params: deliveryParams,
        response: { 202: delivery, ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      if (!(await webhooks.find(req.params.id, scopeOf(req.caller)))) throw notFound('webhook');
      const again = await deliveries.redeliver(req.params.id, req.params.deliveryId, ctx.now());
      if (!again) throw notFound('delivery');
      return reply.code(202).send(deliveryView(again));
    },
  );
};
