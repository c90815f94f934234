import { accountAdvice } from '@metronome/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopeOf } from '../caller.js';
import type { ApiContext, WhatsAppPairing } from '../context.js';
import { conflict, invalidField, notFound } from '../errors.js';
import { errorResponses, idParams } from '../schemas/common.js';

export interface SessionImportRoutesOptions {
  ctx: ApiContext;
  /** absent: this deployment has no WhatsApp sockets (every import answers 409) */
  pairing?: WhatsAppPairing;
}

// A key file's JSON is Baileys' own (BufferJSON); its shape is checked by readLinkedSession.
const sessionBody = z
  .strictObject({
    creds: z.record(z.string(), z.unknown()).describe("the object of the session folder's creds.json, in Baileys' BufferJSON encoding"),
    keys: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('each key file of the folder by its name without .json (pre-key-1, session-60123456789.0, …) to its JSON; absent: none'),
  })
  .meta({ id: 'WhatsAppSession' });

const imported = z
  .object({
    status: z.enum(['active', 'disconnected']).describe('active: WhatsApp took the session; disconnected: it refused it (reason says why)'),
    reason: z.object({ code: z.string(), message: z.string() }).optional().describe('why WhatsApp refused the session'),
  })
  .meta({ id: 'SessionImported' });

/**
 * `POST /v1/accounts/{id}/session`: moves a linked device in from the operator's own Baileys
 * script (or WAHA, evolution-api: the same folder) without linking the phone again.
 */
export const sessionImportRoutes: FastifyPluginAsyncZod<SessionImportRoutesOptions> = async (app, { ctx, pairing: whatsapp }) => {
  app.post(
    '/accounts/:id/session',
    {
      // a session folder of a busy device holds thousands of keys
      bodyLimit: 32 * 1024 * 1024,
      schema: {
        operationId: 'importAccountSession',
        tags: ['accounts'],
        summary:
          "Import a WhatsApp account's linked session (the files of Baileys' useMultiFileAuthState folder), sealed like every secret, in place of the one it had; the account connects once with it and is then `active`, or `disconnected` with WhatsApp's reason",
        params: idParams,
        body: sessionBody,
        response: { 200: imported, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => {
      const account = await ctx.accounts.find(req.params.id, scopeOf(req.caller));
      if (!account) throw notFound('account');
      if (account.platform !== 'whatsapp') throw conflict(`only whatsapp accounts take a linked session; this one is ${account.platform}`);
      if (!whatsapp?.importLinkedSession) throw conflict('this deployment cannot connect WhatsApp accounts');
      // Held first (no run starts meanwhile), and given back as it was if the session is malformed.
      if (!(await ctx.accounts.holdForSessionImport(account.id, ctx.now())))
        throw conflict('a run of this account is queued or running: pause or cancel it (or let it end) before replacing its session');
      let result: Awaited<ReturnType<NonNullable<WhatsAppPairing['importLinkedSession']>>>;
      try {
        result = await whatsapp.importLinkedSession(account.id, req.body);
      } catch (error) {
        await ctx.accounts.update(account.id, null, { status: account.status }, ctx.now());
        throw error;
      }
      if (result.outcome === 'invalid') {
        await ctx.accounts.update(account.id, null, { status: account.status }, ctx.now());
        throw invalidField(result.field, result.message);
      }
      if (result.outcome === 'opened') {
        await ctx.accounts.update(account.id, null, { status: 'active' }, ctx.now());
        ctx.logger.info({ accountId: account.id }, 'whatsapp session imported');
        return { status: 'active' as const };
      }
      await ctx.accounts.disconnect(account.id, accountAdvice('whatsapp', account.id, 'disconnected', result.code), ctx.now());
      ctx.logger.info({ accountId: account.id, code: result.code }, 'whatsapp session imported, refused by WhatsApp');
      return { status: 'disconnected' as const, reason: { code: result.code, message: result.message } };
    },
  );
};
