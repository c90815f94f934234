// A FAKE of GramJS's TelegramClient for one account (the UserClient of
// libs/transports/src/telegram-user/user-client.ts), talking to a FAKE Telegram
// (fake-telegram-mtproto.ts) over HTTP, so every sender process of a test shares one fake
// Telegram. Requests travel as GramJS serialises them (TL bytes); a refusal comes back as
// GramJS's own RPCError class, built by GramJS's RPCMessageToError exactly as GramJS does.
// Loaded by the senders through TELEGRAM_USER_CLIENT_MODULE; FAKE_TELEGRAM_MTPROTO_URL says where
// the fake Telegram listens. Plain JavaScript: service processes run compiled code.
import { randomBytes } from 'node:crypto';
import { Api, errors, extensions } from 'telegram';

/** @param {string} url @param {string} given */
export function fakeGramjsClient(url, given) {
  // GramJS makes a new auth key when it connects without one: a session of its own
  const session = given || `fake-session-${randomBytes(12).toString('hex')}`;
  const call = async (path, body) => {
    const answer = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session, pid: process.pid, ...body }),
    });
    const json = await answer.json();
    if (json.error) throw errors.RPCMessageToError(new Api.RpcError({ errorCode: json.error.code, errorMessage: json.error.message }), body.request ?? null);
    return json;
  };
  const read = (b64) => (b64 ? new extensions.BinaryReader(Buffer.from(b64, 'base64')).tgReadObject() : true);
  const tl = (object) => Buffer.from(object.getBytes()).toString('base64');
  return {
    connect: async () => {
      await call('/connect', {});
    },
    alive: () => true,
    invoke: async (request) => read((await call('/rpc', { request: tl(request) })).result),
    getInputEntity: async (chatId) => read((await call('/entity', { chatId })).peer),
    uploadFile: async (name, bytes) => read((await call('/upload', { name, bytes: bytes.toString('base64') })).file),
    dialogs: async (limit) => (await call('/dialogs', { limit })).dialogs,
    sendCode: async (phone) => (await call('/sign-in/send-code', { phone })).phoneCodeHash,
    signIn: async (phone, phoneCodeHash, code) =>
      (await call('/sign-in/code', { phone, phoneCodeHash, code })).passwordNeeded ? 'password-needed' : 'signed-in',
    qrLogin: async () => {
      // as the GramJS client does: Telegram's SESSION_PASSWORD_NEEDED is the step after a scan
      const json = await call('/sign-in/qr', {}).catch((error) => {
        if (error instanceof errors.RPCError && error.errorMessage === 'SESSION_PASSWORD_NEEDED') return { passwordNeeded: true };
        throw error;
      });
      return json.token
        ? { kind: 'token', token: Buffer.from(json.token, 'hex'), expiresAt: json.expiresAt }
        : { kind: json.passwordNeeded ? 'password-needed' : 'signed-in' };
    },
    checkPassword: async (password) => {
      await call('/sign-in/password', { password });
    },
    me: async () => (await call('/me', {})).user,
    session: () => session,
    disconnect: async () => {
      await call('/disconnect', {}).catch(() => undefined);
    },
  };
}

/** The factory TELEGRAM_USER_CLIENT_MODULE names (UserClientFactory). */
export function makeUserClient(session) {
  const url = process.env.FAKE_TELEGRAM_MTPROTO_URL;
  if (!url) throw new Error('FAKE_TELEGRAM_MTPROTO_URL is not set');
  return fakeGramjsClient(url, session);
}
