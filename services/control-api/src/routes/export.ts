import { Readable } from 'node:stream';
import { ExportRepository } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ownerFor } from '../caller.js';
import type { ApiContext } from '../context.js';
import { notFound } from '../errors.js';
import { errorResponses } from '../schemas/common.js';
import { exportQuery } from '../schemas/erasure.js';

/** `GET /v1/export`: the tenant's data as NDJSON, streamed a page of rows at a time. */
export const exportRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const exports = new ExportRepository(ctx.db);
  app.get(
    '/export',
    {
      schema: {
        operationId: 'exportTenant',
        tags: ['tenants'],
        summary:
          "The tenant's data as NDJSON, one {type, data} object a line: accounts, campaigns, audiences and members, media, webhooks, runs and their targets (never a secret)",
        querystring: exportQuery,
        response: { 200: { description: 'one JSON object a line', content: { 'application/x-ndjson': { schema: z.string() } } }, ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      const tenantId = ownerFor(req.caller, req.query.tenantId);
      if (!(await ctx.tenants.exists(tenantId))) throw notFound('tenant');
      const lines = (async function* () {
        for await (const line of exports.lines(tenantId)) yield `${JSON.stringify(line)}\n`;
      })();
      return (
        reply
          .type('application/x-ndjson; charset=utf-8')
          .header('content-disposition', `attachment; filename="metronome-export-${tenantId}.ndjson"`)
          // a stream is sent as it is read; the schema describes the text it makes
          .send(Readable.from(lines) as unknown as string)
      );
    },
  );
};
