import { hashToken, newToken } from '@metronome/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ApiContext } from '../context.js';
import { unauthorized } from '../errors.js';
import { errorResponses, iso } from '../schemas/common.js';
import { createdTenant, createTenantBody, me } from '../schemas/tenants.js';

/** Tenants (operator only) and `GET /v1/me`. */
export const tenantRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.post(
    '/tenants',
    {
      schema: {
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
    '/me',
    { schema: { tags: ['tenants'], summary: 'Who the bearer token is', response: { 200: me, ...errorResponses() } } },
    async (req) => ({ tenantId: req.caller.tenantId, admin: req.caller.admin }),
  );
};
