import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { bodyTooLarge } from '../body-limit.js';
import { ownerFor, scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { decodePosition, encodePosition, pageOf } from '../cursor.js';
import { invalidField, notFound } from '../errors.js';
import { errorResponses, idParams } from '../schemas/common.js';
import { listMediaQuery, media, mediaPage, mediaTypeOf, mediaView, uploadQuery } from '../schemas/media.js';

/** Media uploads: the raw body is the file, its Content-Type is the media type. */
export const mediaRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const maxBytes = ctx.config.mediaMaxBytes;
  // Inside this plugin only, any body is bytes up to MEDIA_MAX_BYTES (a 413 is drained before closing: body-limit.ts).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBytes }, (_req, body, done) => done(null, body));

  app.post(
    '/media',
    {
      bodyLimit: maxBytes,
      schema: {
        operationId: 'uploadMedia',
        tags: ['media'],
        summary: 'Upload a media file as the raw body with its Content-Type',
        querystring: uploadQuery,
        response: { 201: media, ...errorResponses(413) },
      },
    },
    async (req, reply) => {
      const tenantId = ownerFor(req.caller, req.query.tenantId);
      const contentType = mediaTypeOf(req.headers['content-type']);
      if (contentType === null) throw invalidField('content-type', 'expected the media type of the body, e.g. image/png');
      const bytes = req.body;
      if (!Buffer.isBuffer(bytes) || bytes.length === 0) throw invalidField('body', 'the body must be the file, at least one byte');
      if (bytes.length > maxBytes) throw bodyTooLarge(maxBytes);
      if (req.caller.admin && !(await ctx.tenants.exists(tenantId))) throw invalidField('tenantId', 'no such tenant');
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const created = await ctx.media.create({ tenantId, contentType, sha256, filename: req.query.filename ?? null, bytes });
      return reply.code(201).send(mediaView(created));
    },
  );

  app.get(
    '/media',
    {
      schema: {
        operationId: 'listMedia',
        tags: ['media'],
        summary: 'List media, newest first',
        querystring: listMediaQuery,
        response: { 200: mediaPage, ...errorResponses() },
      },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const rows = await ctx.media.list(scopeOf(req.caller), { limit: limit + 1, before });
      const page = pageOf(rows, limit, (m) => encodePosition({ at: m.cursorAt, id: m.id }));
      return { items: page.rows.map(mediaView), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/media/:id',
    {
      schema: {
        operationId: 'getMedia',
        tags: ['media'],
        summary: "One media's description",
        params: idParams,
        response: { 200: media, ...errorResponses(404) },
      },
    },
    async (req) => {
      const found = await ctx.media.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('media');
      return mediaView(found);
    },
  );
};
