import type { AccountRow } from '@metronome/db';
import { PairingError } from '@metronome/transports';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopeOf } from '../caller.js';
import type { ApiContext, WhatsAppPairing } from '../context.js';
import { conflict, notFound } from '../errors.js';
import { errorResponses, idParams, iso, time } from '../schemas/common.js';

export type { WhatsAppPairing } from '../context.js';

export interface PairingRoutesOptions {
  ctx: ApiContext;
  /** absent: this deployment cannot pair (every request answers 409) */
  pairing?: WhatsAppPairing;
}

const pairBody = z
  .strictObject({
    phoneNumber: z
      .string()
      .regex(/^\+?[1-9][0-9]{6,14}$/, 'expected the phone number in international (E.164) form: country code first, digits only, e.g. 60123456789')
      .optional()
      .describe('pair by code: WhatsApp sends a notification to this phone, where the code is typed; without it, a QR code'),
  })
  // no body at all (Fastify reads it as null): pair by QR
  .nullish();

const pairing = z
  .object({
    status: z.literal('pairing'),
    qr: z.string().optional().describe('the QR payload to render (WhatsApp > Linked devices > Link a device)'),
    pairingCode: z.string().optional().describe('the code to type on the phone (Link with phone number instead)'),
    expiresAt: time.describe('when the QR or code stops working; pair again after that'),
  })
  .meta({ id: 'Pairing' });

/** `POST /v1/accounts/{id}/pair`: links a WhatsApp account as a new device of the operator's phone. */
export const pairingRoutes: FastifyPluginAsyncZod<PairingRoutesOptions> = async (app, { ctx, pairing: whatsapp }) => {
  app.post(
    '/accounts/:id/pair',
    {
      schema: {
        operationId: 'pairAccount',
        tags: ['accounts'],
        summary:
          'Pair a WhatsApp account: answers a QR payload (or, given phoneNumber, a pairing code) to confirm on the phone; the account is `pairing`, then `active` once the phone accepts (event `account` on /v1/events)',
        params: idParams,
        body: pairBody,
        response: { 200: pairing, ...errorResponses(404, 409) },
      },
    },
    async (req) => {
      const account = await ctx.accounts.find(req.params.id, scopeOf(req.caller));
      if (!account) throw notFound('account');
      if (account.platform !== 'whatsapp') throw conflict(`only whatsapp accounts are paired; this one is ${account.platform}`);
      // Re-pairing a working account would log its current device out: disable it first.
      if (account.status === 'active') throw conflict('the account is paired and active; set its status to disabled before pairing it again');
      if (!whatsapp) throw conflict('this deployment cannot pair WhatsApp accounts');
      const phoneNumber = req.body?.phoneNumber?.replace(/^\+/, '');

      // `pairing` first: the phone may accept the moment it shows the code.
      await ctx.accounts.update(account.id, null, { status: 'pairing' }, ctx.now());
      try {
        const start = await whatsapp.pair(account.id, { ...(phoneNumber && { phoneNumber }) }, hooks(ctx, account));
        return {
          status: 'pairing' as const,
          ...(start.qr && { qr: start.qr }),
          ...(start.pairingCode && { pairingCode: start.pairingCode }),
          expiresAt: iso(start.expiresAt),
        };
      } catch (error) {
        await ctx.accounts.update(account.id, null, { status: account.status }, ctx.now());
        if (error instanceof PairingError) throw conflict(`pairing could not start: ${error.message}; try again`);
        throw error;
      }
    },
  );
};

/** Status changes as the pairing goes on; each one is an `account` event on /v1/events. */
function hooks(ctx: ApiContext, account: AccountRow) {
  return {
    onPaired: async () => {
      await ctx.accounts.update(account.id, null, { status: 'active' }, ctx.now());
      ctx.logger.info({ accountId: account.id }, 'whatsapp account paired');
    },
    onEnded: async (reason: { code: string; message: string }) => {
      // Only a pairing still under way falls back: an operator's change meanwhile stands.
      const now = await ctx.accounts.find(account.id, null);
      if (now?.status === 'pairing') await ctx.accounts.update(account.id, null, { status: 'disconnected' }, ctx.now());
      ctx.logger.info({ accountId: account.id, code: reason.code }, 'whatsapp pairing ended without success');
    },
  };
}
