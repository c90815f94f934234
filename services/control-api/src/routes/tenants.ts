import { hashToken, newToken } from '@metronome/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { JSON_BODY_LIMIT } from '../body-limit.js';
import type { ApiContext } from '../context.js';
import { decodePosition, encodePosition, pageOf } from '../cursor.js';
import { unauthorized } from '../errors.js';
import { errorResponses, iso } from '../schemas/common.js';
import { createdTenant, createTenantBody, listTenantsQuery, me, tenantPage } from '../schemas/tenants.js';

/** Tenants (operator only) and `GET /v1/me`. */
export const tenantRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.post(
    '/tenants',
    {
      schema: {
        operationId: 'createTenant',
        tags: ['tenants'],
        summary: 'Create a tenant (admin token only); its token is shown only in this answer',
        body: createTenantBody,
        response: { 201: createdTenant, ...errorResponses() },
      },
    },
    async (req, reply) => {
      if (!req.caller.admin) throw unauthorized('creating tenants requires the admin token');
      const token = newToken();
      const tenant = await ctx.tenants.create(req.body.name, hashToken(token));
      return reply.code(201).send({ id: tenant.id, name: tenant.name, token, createdAt: iso(tenant.createdAt) });
    },
  );

  app.get(
    '/tenants',
    {
      schema: {
        operationId: 'listTenants',
        tags: ['tenants'],
        summary: 'List tenants, newest first (admin token only); never their tokens',
        querystring: listTenantsQuery,
        response: { 200: tenantPage, ...errorResponses() },
      },
    },
    async (req) => {
      if (!req.caller.admin) throw unauthorized('listing tenants requires the admin token');
      const { limit, cursor } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const rows = await ctx.tenants.list({ limit: limit + 1, before });
      const page = pageOf(rows, limit, (t) => encodePosition({ at: t.cursorAt, id: t.id }));
      return { items: page.rows.map((t) => ({ id: t.id, name: t.name, createdAt: iso(t.createdAt) })), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/me',
    {
      schema: {
        operationId: 'getMe',
        tags: ['tenants'],
        summary: 'Who the bearer token is, and the bodies it may send',
        response: { 200: me, ...errorResponses() },
      },
    },
    async (req) => ({
      tenantId: req.caller.tenantId,
      admin: req.caller.admin,
      limits: { mediaMaxBytes: ctx.config.mediaMaxBytes, jsonMaxBytes: JSON_BODY_LIMIT },
    }),
  );
};
