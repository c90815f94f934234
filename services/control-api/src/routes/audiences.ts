import { foldForSearch } from '@metronome/core';
import { AUDIENCE_NAME_INDEX, AudienceMemberRepository, AudienceRepository, type AudienceRow } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';
import { readMembersCsv, writeMembersCsv, type MemberInput } from '../audience-csv.js';
import { mergeRepeats, upsertMembers } from '../audience-members.js';
import { ownerFor, scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { decodePosition, decodeTargetCursor, encodePosition, encodeTargetCursor, pageOf } from '../cursor.js';
import { ApiError, conflict, invalidField, notFound, validationFailed } from '../errors.js';
import {
  addMembersBody,
  addMembersQuery,
  audience,
  audiencePage,
  audienceView,
  createAudienceBody,
  listAudiencesQuery,
  listMembersQuery,
  MAX_MEMBERS_PER_UPLOAD,
  MEMBERS_BODY_LIMIT,
  memberPage,
  membersAdded,
  membersRemoved,
  memberView,
  patchAudienceBody,
  removeMembersBody,
} from '../schemas/audiences.js';
import { errorResponses, idParams } from '../schemas/common.js';

const PREVIEW_SIZE = 10;
const EXPORT_PAGE = 10_000;

// A CSV upload reaches its route as bytes; only a JSON body is the schema's to check.
const jsonOrBytes: FastifySchemaCompiler<z.ZodType> = (route) => {
  const check = validatorCompiler(route);
  return route.httpPart === 'body' ? (data: unknown) => (Buffer.isBuffer(data) ? { value: data } : check(data)) : check;
};

/** Audiences: a tenant's named, reusable lists of chats, each with variables (CONTRACT §3, Audiences). */
export const audienceRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const audiences = new AudienceRepository(ctx.db);
  const members = new AudienceMemberRepository(ctx.db);
  // Inside this plugin only: a CSV body is read as bytes (readMembersCsv decodes it, refusing what is not UTF-8).
  app.addContentTypeParser('text/csv', { parseAs: 'buffer', bodyLimit: MEMBERS_BODY_LIMIT }, (_req, body, done) => done(null, body));

  const mustFind = async (id: string, scope: string | null): Promise<AudienceRow> => {
    const found = await audiences.find(id, scope);
    if (!found) throw notFound('audience');
    return found;
  };

  app.post(
    '/audiences',
    {
      bodyLimit: MEMBERS_BODY_LIMIT,
      schema: {
        operationId: 'createAudience',
        tags: ['audiences'],
        summary: 'Create an audience, with members or empty',
        body: createAudienceBody,
        response: { 201: audience, ...errorResponses(409, 413) },
      },
    },
    async (req, reply) => {
      const tenantId = ownerFor(req.caller, req.body.tenantId);
      if (req.caller.admin && !(await ctx.tenants.exists(tenantId))) throw invalidField('tenantId', 'no such tenant');
      const given = mergeRepeats(req.body.members ?? []);
      const created = await nameTaken(req.body.name, () =>
        ctx.db.transaction().execute(async (trx) => {
          const now = ctx.now();
          const row = await new AudienceRepository(trx).create(tenantId, req.body.name, now);
          await upsertMembers(trx, row.id, given, now);
          return { ...row, memberCount: given.length };
        }),
      );
      return reply.code(201).send(audienceView(created));
    },
  );

  app.get(
    '/audiences',
    {
      schema: {
        operationId: 'listAudiences',
        tags: ['audiences'],
        summary: 'List audiences, newest first',
        querystring: listAudiencesQuery,
        response: { 200: audiencePage, ...errorResponses() },
      },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const rows = await audiences.list(scopeOf(req.caller), { limit: limit + 1, before });
      const page = pageOf(rows, limit, (a) => encodePosition({ at: a.cursorAt, id: a.id }));
      return { items: page.rows.map(audienceView), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/audiences/:id',
    {
      schema: {
        operationId: 'getAudience',
        tags: ['audiences'],
        summary: 'One audience, with its member count',
        params: idParams,
        response: { 200: audience, ...errorResponses(404) },
      },
    },
    async (req) => audienceView(await mustFind(req.params.id, scopeOf(req.caller))),
  );

  app.patch(
    '/audiences/:id',
    {
      schema: {
        operationId: 'renameAudience',
        tags: ['audiences'],
        summary: 'Rename an audience',
        params: idParams,
        body: patchAudienceBody,
        response: { 200: audience, ...errorResponses(404, 409) },
      },
    },
    async (req) => {
      const renamed = await nameTaken(req.body.name, () => audiences.rename(req.params.id, scopeOf(req.caller), req.body.name, ctx.now()));
      if (!renamed) throw notFound('audience');
      return audienceView(renamed);
    },
  );

  app.delete(
    '/audiences/:id',
    {
      schema: {
        operationId: 'deleteAudience',
        tags: ['audiences'],
        summary: 'Delete an audience and its members; 409 while a campaign names it',
        params: idParams,
        response: { 204: z.undefined().describe('deleted'), ...errorResponses(404, 409) },
      },
    },
    async (req, reply) => {
      const result = await audiences.delete(req.params.id, scopeOf(req.caller));
      if (!result) throw notFound('audience');
      if (!result.deleted) {
        const named = result.namedBy.map((c) => ({ field: `campaigns.${c.id}`, message: `campaign "${c.name}" sends to this audience` }));
        throw new ApiError(409, 'conflict', 'campaigns send to this audience: take it out of their audienceIds (or delete them) first', named);
      }
      return reply.code(204).send();
    },
  );

  app.get(
    '/audiences/:id/members',
    {
      schema: {
        operationId: 'listAudienceMembers',
        tags: ['audiences'],
        summary: "An audience's members in chat order, optionally those matching a query",
        params: idParams,
        querystring: listMembersQuery,
        response: { 200: memberPage, ...errorResponses(404) },
      },
    },
    async (req) => {
      const { limit, cursor, query } = req.query;
      const found = await mustFind(req.params.id, scopeOf(req.caller));
      const after = cursor === undefined ? undefined : decodeTargetCursor(cursor);
      const folded = query === undefined ? undefined : foldForSearch(query);
      const rows = await members.list(found.id, { limit: limit + 1, afterChat: after?.chatId, afterThread: after?.threadId, query: folded });
      const page = pageOf(rows, limit, (m) => encodeTargetCursor(m.chatId, m.threadId ?? 0));
      return { items: page.rows.map(memberView), nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/audiences/:id/members',
    {
      bodyLimit: MEMBERS_BODY_LIMIT,
      // typed for one schema, not the route's object of schemas: the compiler is called per part
      validatorCompiler: jsonOrBytes as never,
      schema: {
        operationId: 'addAudienceMembers',
        tags: ['audiences'],
        summary: `Add or update members in bulk, as JSON or as CSV (Content-Type: text/csv), at most ${MAX_MEMBERS_PER_UPLOAD}; all or nothing`,
        params: idParams,
        querystring: addMembersQuery,
        body: addMembersBody,
        response: { 200: membersAdded, ...errorResponses(404, 413, 415) },
      },
    },
    async (req) => {
      const found = await mustFind(req.params.id, scopeOf(req.caller));
      const body = req.body as unknown;
      const given = Buffer.isBuffer(body) ? fromCsv(body) : mergeRepeats((body as z.output<typeof addMembersBody>).members);
      if (req.query.dryRun) {
        const existing = await members.countExisting(found.id, given);
        return { added: given.length - existing, updated: existing, preview: given.slice(0, PREVIEW_SIZE).map(memberView) };
      }
      return ctx.db.transaction().execute((trx) => upsertMembers(trx, found.id, given, ctx.now()));
    },
  );

  app.get(
    '/audiences/:id/members.csv',
    {
      schema: {
        operationId: 'exportAudienceMembers',
        tags: ['audiences'],
        summary: "An audience's members as CSV (UTF-8 with a BOM; formula-looking cells escaped with a leading ')",
        params: idParams,
        response: { 200: { description: 'the members as CSV', content: { 'text/csv': { schema: z.string() } } }, ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      const found = await mustFind(req.params.id, scopeOf(req.caller));
      const all = [];
      for (let after: { chatId: string; threadId?: number } | undefined; ; ) {
        const page = await members.list(found.id, { limit: EXPORT_PAGE, afterChat: after?.chatId, afterThread: after?.threadId });
        all.push(...page);
        if (page.length < EXPORT_PAGE) break;
        after = page[page.length - 1]!;
      }
      const filename = `${found.name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100) || 'audience'}.csv`;
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${filename}"`).send(writeMembersCsv(all));
    },
  );

  app.delete(
    '/audiences/:id/members',
    {
      bodyLimit: MEMBERS_BODY_LIMIT,
      schema: {
        operationId: 'removeAudienceMembers',
        tags: ['audiences'],
        summary: 'Remove members by chat id',
        params: idParams,
        body: removeMembersBody,
        response: { 200: membersRemoved, ...errorResponses(404, 413) },
      },
    },
    async (req) => {
      const found = await mustFind(req.params.id, scopeOf(req.caller));
      return { removed: await members.remove(found.id, [...new Set(req.body.chatIds)], ctx.now()) };
    },
  );
};

function fromCsv(bytes: Buffer): MemberInput[] {
  const read = readMembersCsv(bytes, MAX_MEMBERS_PER_UPLOAD);
  if (!read.ok) throw validationFailed(read.problems, read.message);
  return read.members;
}

// Two audiences of a tenant cannot share a name: the unique index says so, answered as a 409.
async function nameTaken<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const e = err as { code?: unknown; constraint?: unknown };
    if (e.code === '23505' && e.constraint === AUDIENCE_NAME_INDEX) throw conflict(`an audience named ${JSON.stringify(name)} already exists`);
    throw err;
  }
}
