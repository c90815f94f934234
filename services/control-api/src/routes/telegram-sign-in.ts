import { open, processSecrets, proxyName, seal } from '@metronome/core';
import { TelegramSignInRepository, type AccountRow, type TelegramSignInRow } from '@metronome/db';
import { describeProxyError, proxyOf } from '@metronome/transports';
import type { UserClient } from '@metronome/transports/telegram-user';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopeOf } from '../caller.js';
import type { ApiContext, TelegramSignIn } from '../context.js';
import { conflict, invalidField, notFound, type ApiError } from '../errors.js';
import { errorResponses, idParams, iso, time } from '../schemas/common.js';

export type { TelegramSignIn } from '../context.js';

export interface TelegramSignInRoutesOptions {
  ctx: ApiContext;
  /** absent: this deployment cannot sign Telegram accounts in (every request answers 409) */
  signIn?: TelegramSignIn;
}

const signInState = z
  .object({
    state: z
      .enum(['not_started', 'code_sent', 'qr_shown', 'password_needed', 'failed', 'signed_in', 'signed_out'])
      .describe(
        'code_sent: type the code Telegram sent (POST …/code); qr_shown: scan `qr.url` in the Telegram app (Settings → Devices → Link Desktop Device), then GET again; password_needed: the two-step password (POST …/password); failed: start again; signed_in: the account sends',
      ),
    phone: z.string().nullable().describe('the number being signed in, its last 4 digits shown'),
    qr: z
      .object({ url: z.string(), expiresAt: time })
      .nullable()
      .describe('qr_shown: the `tg://login?token=…` to show as a QR code, and when it stops working (a GET after that shows a new one)'),
    error: z
      .object({ code: z.string(), field: z.string(), message: z.string() })
      .nullable()
      .describe("the last step's refusal (a wrong or expired code, a wrong password, a banned number) and the field it was about"),
    updatedAt: time.nullable(),
  })
  .meta({ id: 'TelegramSignIn' });

const phoneBody = z.strictObject({
  phone: z
    .string()
    .regex(/^\+?[1-9][0-9]{6,14}$/, 'expected the phone number in international (E.164) form: country code first, digits only, e.g. +447700900123')
    .describe('the Telegram account’s phone number'),
});
const codeBody = z.strictObject({
  code: z
    .string()
    .regex(/^[0-9]{5,6}$/, 'expected the 5 or 6 digits Telegram sent')
    .describe('the code Telegram sent to the app or by SMS'),
});
const passwordBody = z.strictObject({ password: z.string().min(1).max(256).describe('the two-step verification password') });

/** A refusal of one step: what the state records, and the 400 naming the field. */
const REFUSALS: Record<string, { field: string; keeps: boolean; message: string }> = {
  PHONE_NUMBER_INVALID: { field: 'phone', keeps: false, message: 'Telegram does not know this phone number: check the country code and digits' },
  PHONE_NUMBER_BANNED: { field: 'phone', keeps: false, message: 'Telegram has banned this phone number: it cannot sign in' },
  PHONE_NUMBER_UNOCCUPIED: { field: 'phone', keeps: false, message: 'no Telegram account uses this phone number: sign up in the Telegram app first' },
  PHONE_CODE_INVALID: { field: 'code', keeps: true, message: 'wrong code: type the code Telegram sent again' },
  PHONE_CODE_EXPIRED: { field: 'code', keeps: false, message: 'the code expired: ask for a new one (POST /v1/accounts/{id}/telegram-sign-in)' },
  PHONE_CODE_HASH_EMPTY: {
    field: 'code',
    keeps: false,
    message: 'this code belongs to no sign-in in progress: ask for a new one (POST /v1/accounts/{id}/telegram-sign-in)',
  },
  PASSWORD_HASH_INVALID: { field: 'password', keeps: true, message: 'wrong two-step verification password' },
};

/** `…/telegram-sign-in`: a Telegram user account signs in with its phone number, the code Telegram sends, and its two-step password when set. */
export const telegramSignInRoutes: FastifyPluginAsyncZod<TelegramSignInRoutesOptions> = async (app, { ctx, signIn }) => {
  const signIns = new TelegramSignInRepository(ctx.db);
  const keys = [ctx.config.secretsKey, ...(ctx.config.secretsKeyPrevious ? [ctx.config.secretsKeyPrevious] : [])];

  const accountFor = async (id: string, caller: Parameters<typeof scopeOf>[0]): Promise<AccountRow> => {
    const account = await ctx.accounts.find(id, scopeOf(caller));
    if (!account) throw notFound('account');
    if (account.platform !== 'telegram_user') throw conflict(`only telegram_user accounts sign in to Telegram; this one is ${account.platform}`);
    if (!signIn) throw conflict('this deployment cannot sign Telegram accounts in');
    return account;
  };
  /** One step on a client of the pending session, always disconnected after. */
  const withClient = async <T>(account: AccountRow, session: string, step: (c: UserClient) => Promise<T>): Promise<T> => {
    // GramJS refuses to start without them (and Telegram would refuse the sign-in): say what fixes it
    if (!(signIn!.apiId > 0) || !signIn!.apiHash)
      throw conflict(
        'this deployment has no Telegram application: set TELEGRAM_API_ID and TELEGRAM_API_HASH (my.telegram.org, API development tools) on the API and the senders, then try again',
      );
    // through the account's proxy, as its sends will go (docs/platforms.md, "Proxy")
    const sealed = await ctx.accounts.sealedProxy(account.id);
    const proxy = sealed ? proxyOf(open(sealed, keys).toString('utf8'), 'telegram_user') : null;
    const client = await signIn!.makeClient(session, { apiId: signIn!.apiId, apiHash: signIn!.apiHash, proxy });
    try {
      try {
        await client.connect();
      } catch (error) {
        if (!proxy) throw error;
        throw conflict(
          `could not connect through the account's proxy: ${proxyName(proxy)} ${describeProxyError(error)}; give it a working proxy (PATCH /v1/accounts/${account.id} {"proxy": …}) and try again`,
        );
      }
      return await step(client);
    } finally {
      await client.disconnect().catch(() => undefined);
    }
  };
  /** Telegram's refusal of a step: recorded (the state says it), then the 400 naming the field. */
  const refused = async (account: AccountRow, row: Omit<TelegramSignInRow, 'error' | 'updatedAt' | 'accountId'>, error: unknown): Promise<ApiError> => {
    // GramJS's error classes tell the refusal; loaded on first use, as the client that threw was
    const { telegramRefusalOf } = await import('@metronome/transports/telegram-user');
    const refusal = telegramRefusalOf(error);
    if (!refusal) throw error;
    const rpc = refusal.code;
    const known = REFUSALS[rpc] ?? {
      field: 'phone',
      keeps: true,
      message: refusal.seconds !== null ? `Telegram asks to wait ${refusal.seconds} s before trying again` : `Telegram refused (${rpc})`,
    };
    const message = known.message.replace('{id}', account.id);
    const code = rpc.toLowerCase();
    await signIns.save(
      account.id,
      { ...(known.keeps ? row : { ...row, state: 'failed', phoneCodeHash: null, session: null }), error: { code, field: known.field, message } },
      ctx.now(),
    );
    return invalidField(known.field, `${message} (${rpc})`);
  };
  const view = async (account: AccountRow) => stateView(account, await signIns.find(account.id));
  /** The last step succeeded: the session is the account's (sealed), the account `active`. */
  const finish = async (account: AccountRow, client: UserClient) => {
    const me = await client.me();
    const session = client.session();
    processSecrets().add(session);
    if (!(await signIns.finish(account.id, seal(JSON.stringify({ session }), ctx.config.secretsKey), me.id, ctx.now()))) {
      await signIns.save(
        account.id,
        {
          state: 'failed',
          phone: '',
          phoneCodeHash: null,
          session: null,
          error: { code: 'account_taken', field: 'phone', message: 'another account already signs in as this Telegram user' },
        },
        ctx.now(),
      );
      throw conflict('another account already signs in as this Telegram user');
    }
  };
  const pending = (row: TelegramSignInRow | null, state: 'code_sent' | 'password_needed'): TelegramSignInRow & { session: Buffer } => {
    if (row?.state !== state || !row.session)
      throw conflict(`no sign-in is waiting for this step (state: ${row?.state ?? 'none'}); start with POST /v1/accounts/{id}/telegram-sign-in`);
    return row as TelegramSignInRow & { session: Buffer };
  };
  const sessionOf = (row: { session: Buffer }) => (JSON.parse(open(row.session, keys).toString('utf8')) as { session: string }).session;

  const schema = (operationId: string, summary: string) => ({
    operationId,
    tags: ['accounts'],
    summary,
    params: idParams,
    response: { 200: signInState, ...errorResponses(400, 404, 409) },
  });

  /** A QR login asks Telegram again: still waiting (a new token once the old one expired), signed in, or the password next. */
  const pollQr = async (account: AccountRow, row: TelegramSignInRow & { session: Buffer }) => {
    try {
      await withClient(account, sessionOf(row), async (c) => {
        const next = await c.qrLogin();
        if (next.kind === 'signed-in') return finish(account, c);
        if (next.kind === 'password-needed') return signIns.save(account.id, { ...row, state: 'password_needed', qr: null, error: null }, ctx.now());
        return signIns.save(account.id, { ...row, qr: qrOf(next), error: null }, ctx.now());
      });
    } catch (error) {
      throw await refused(account, row, error);
    }
  };

  app.get(
    '/accounts/:id/telegram-sign-in',
    {
      schema: schema(
        'telegramSignInState',
        'Where the Telegram sign-in of a telegram_user account stands; during a QR login it asks Telegram whether the code was scanned',
      ),
    },
    async (req) => {
      const account = await accountFor(req.params.id, req.caller);
      const row = await signIns.find(account.id);
      if (row?.state === 'qr_shown' && row.session) await pollQr(account, row as TelegramSignInRow & { session: Buffer });
      return view((await ctx.accounts.find(account.id, null)) ?? account);
    },
  );

  app.post(
    '/accounts/:id/telegram-sign-in/qr',
    {
      schema: schema(
        'startTelegramQrLogin',
        'Sign a telegram_user account in with a QR code: scan `qr.url` in the Telegram app (Settings → Devices → Link Desktop Device), then GET …/telegram-sign-in until signed in',
      ),
    },
    async (req) => {
      const account = await accountFor(req.params.id, req.caller);
      if (account.status === 'active') throw conflict('the account is signed in and active; set its status to disabled before signing it in again');
      try {
        await withClient(account, '', async (c) => {
          const first = await c.qrLogin();
          if (first.kind !== 'token') throw conflict('Telegram answered the QR login without a code to show; try again');
          const session = seal(JSON.stringify({ session: c.session() }), ctx.config.secretsKey);
          await signIns.save(account.id, { state: 'qr_shown', phone: '', qr: qrOf(first), phoneCodeHash: null, session, error: null }, ctx.now());
        });
        if (account.status !== 'pairing') await ctx.accounts.update(account.id, null, { status: 'pairing' }, ctx.now());
      } catch (error) {
        throw await refused(account, { state: 'failed', phone: '', qr: null, phoneCodeHash: null, session: null }, error);
      }
      return view(account);
    },
  );

  app.post(
    '/accounts/:id/telegram-sign-in',
    {
      schema: {
        ...schema(
          'startTelegramSignIn',
          'Sign a telegram_user account in: Telegram sends a code to the phone number; the account is `pairing` until the last step',
        ),
        body: phoneBody,
      },
    },
    async (req) => {
      const account = await accountFor(req.params.id, req.caller);
      if (account.status === 'active') throw conflict('the account is signed in and active; set its status to disabled before signing it in again');
      const phone = `+${req.body.phone.replace(/^\+/, '')}`;
      let session = '';
      try {
        const hash = await withClient(account, '', async (c) => {
          const h = await c.sendCode(phone);
          session = c.session();
          return h;
        });
        await signIns.save(
          account.id,
          { state: 'code_sent', phone, phoneCodeHash: hash, session: seal(JSON.stringify({ session }), ctx.config.secretsKey), error: null },
          ctx.now(),
        );
        if (account.status !== 'pairing') await ctx.accounts.update(account.id, null, { status: 'pairing' }, ctx.now());
      } catch (error) {
        throw await refused(account, { state: 'failed', phone, qr: null, phoneCodeHash: null, session: null }, error);
      }
      return view(account);
    },
  );

  app.post(
    '/accounts/:id/telegram-sign-in/code',
    { schema: { ...schema('telegramSignInCode', 'The code Telegram sent: signed in, or the two-step password is asked next'), body: codeBody } },
    async (req) => {
      const account = await accountFor(req.params.id, req.caller);
      const row = pending(await signIns.find(account.id), 'code_sent');
      try {
        await withClient(account, sessionOf(row), async (c) => {
          const next = await c.signIn(row.phone, row.phoneCodeHash ?? '', req.body.code);
          if (next === 'password-needed') await signIns.save(account.id, { ...row, state: 'password_needed', error: null }, ctx.now());
          else await finish(account, c);
        });
      } catch (error) {
        throw await refused(account, row, error);
      }
      return view((await ctx.accounts.find(account.id, null)) ?? account);
    },
  );

  app.post(
    '/accounts/:id/telegram-sign-in/password',
    { schema: { ...schema('telegramSignInPassword', 'The two-step verification password: the account is signed in and active'), body: passwordBody } },
    async (req) => {
      const account = await accountFor(req.params.id, req.caller);
      const row = pending(await signIns.find(account.id), 'password_needed');
      try {
        await withClient(account, sessionOf(row), async (c) => {
          await c.checkPassword(req.body.password);
          await finish(account, c);
        });
      } catch (error) {
        throw await refused(account, row, error);
      }
      return view((await ctx.accounts.find(account.id, null)) ?? account);
    },
  );
};

function stateView(account: AccountRow, row: TelegramSignInRow | null): z.output<typeof signInState> {
  if (row) {
    const qr = row.state === 'qr_shown' && row.qr ? { url: row.qr.url, expiresAt: iso(row.qr.expiresAt) } : null;
    return { state: row.state, phone: masked(row.phone), qr, error: row.error, updatedAt: iso(row.updatedAt) };
  }
  const state = account.status === 'pairing' ? 'not_started' : account.status === 'disconnected' ? 'signed_out' : 'signed_in';
  return { state, phone: null, qr: null, error: null, updatedAt: null };
}

/** The QR login's link: the token as Telegram's apps read it from a QR code. */
function qrOf(t: { token: Buffer; expiresAt: number }): { url: string; expiresAt: Date } {
  return { url: `tg://login?token=${t.token.toString('base64url')}`, expiresAt: new Date(t.expiresAt) };
}

/** `+44…0123`: enough to tell numbers apart, not the whole number. */
function masked(phone: string): string | null {
  return phone ? `${phone.slice(0, 3)}…${phone.slice(-4)}` : null;
}
