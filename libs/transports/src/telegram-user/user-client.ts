import { Api, errors, helpers, TelegramClient } from 'telegram';
import { Logger, LogLevel } from 'telegram/extensions/Logger.js';
import { computeCheck } from 'telegram/Password.js';
import { StringSession } from 'telegram/sessions/index.js';
import type { ProxyInterface } from 'telegram/network/connection/TCPMTProxy.js';
import type { ProxySettings, TelegramPeer } from '@metronome/core';
import { learntPeers, peerOfEntity } from './peer-entities.js';
import type { TelegramEndpoint } from './server-endpoint.js';

/** One of the account's dialogs, as the directory needs it. */
export interface UserDialog {
  /** the id a send names the chat by: a user's id, `-{id}` for a basic group, `-100{id}` for a channel or supergroup */
  chatId: string;
  title: string | null;
  kind: 'user' | 'group' | 'channel';
  /** may the account post there (not a broadcast channel it does not admin, not banned from sending) */
  canSend: boolean;
  memberCount: number | null;
  /** the peer with its access hash, as this account may address it; null when Telegram gave none */
  peer: TelegramPeer | null;
}

/**
 * The part of GramJS's TelegramClient Metronome uses, for one account: gramjsClientFactory wraps
 * a real TelegramClient (tests run it against the wire-level fake Telegram, test/helpers/wire-telegram.ts).
 */
export interface UserClient {
  connect(): Promise<void>;
  /** whether the connection is up now (false while GramJS reconnects, and for good once it gave up) */
  alive(): boolean;
  /** one MTProto request; GramJS's RPCError (or a subclass) for a refusal */
  invoke(request: Api.AnyRequest): Promise<unknown>;
  /** the peer a chat id names (from the session's cache or the server) */
  getInputEntity(chatId: string): Promise<Api.TypeInputPeer>;
  dialogs(limit: number): Promise<UserDialog[]>;
  /** auth.sendCode: the code goes to the phone's Telegram app (or SMS); its phone_code_hash */
  sendCode(phone: string): Promise<string>;
  /** auth.signIn with the code; 'password-needed' when two-step verification is set (SESSION_PASSWORD_NEEDED) */
  signIn(phone: string, phoneCodeHash: string, code: string): Promise<'signed-in' | 'password-needed'>;
  /**
   * auth.exportLoginToken: the QR login's token while nobody scanned it, then signed in (or the
   * two-step password is asked next, SESSION_PASSWORD_NEEDED). Asked again to see whether it was scanned.
   */
  qrLogin(): Promise<{ kind: 'token'; token: Buffer; expiresAt: number } | { kind: 'signed-in' } | { kind: 'password-needed' }>;
  /** auth.checkPassword (SRP over account.getPassword) */
  checkPassword(password: string): Promise<void>;
  /** the signed-in user: its id and phone */
  me(): Promise<{ id: string; phone: string | null }>;
  /** the session string now (its auth key; GramJS may have moved the account to another data centre) */
  session(): string;
  disconnect(): Promise<void>;
}

export interface UserClientOptions {
  /** TELEGRAM_API_ID / TELEGRAM_API_HASH: the application's id at my.telegram.org */
  apiId: number;
  apiHash: string;
  /** the account's proxy (docs/platforms.md, "Proxy"); absent or null: none */
  proxy?: ProxySettings | null;
  /** where a new sign-in connects (TELEGRAM_USER_DC); absent or null: Telegram's data centre 2 */
  dc?: TelegramEndpoint | null;
  /** told every peer GramJS learns (answers, updates, dialogs), with its access hash */
  onPeers?: ((peers: TelegramPeer[]) => void) | undefined;
}

/** GramJS's `proxy` option for an account's proxy: SOCKS5 (names resolved by GramJS: it connects to addresses) or MTProxy. */
export function gramjsProxy(p: ProxySettings): ProxyInterface {
  if (p.scheme === 'mtproxy') return { ip: p.host, port: p.port, secret: p.secret!, MTProxy: true };
  return { ip: p.host, port: p.port, socksType: 5, ...(p.username !== null && { username: p.username, password: p.password ?? '' }) };
}

/** Builds the client of one account from its (opened) session string; '' for a sign-in. */
export type UserClientFactory = (session: string, options: UserClientOptions) => UserClient;

/**
 * The production client: GramJS, with its own flood sleeping off (`floodSleepThreshold: 0`) so
 * every FLOOD_WAIT reaches Metronome's pace instead of being slept inside a send.
 */
export const gramjsClientFactory: UserClientFactory = (session, options) => {
  const string = new StringSession(session);
  // GramJS in Node connects to port 80 of a data centre (443 over WSS), whatever the session says
  if (!session && options.dc) string.setDC(options.dc.dcId, options.dc.ip, 80);
  // GramJS prints a failed connection's error whole, the proxy's options (and password) with it:
  // through a proxy it prints nothing, and the error reaches the account instead (onError below).
  // Its logger is given at construction, or it prints its version line on every client.
  const client = new TelegramClient(string, options.apiId, options.apiHash, {
    floodSleepThreshold: 0,
    connectionRetries: 3,
    autoReconnect: true,
    baseLogger: new Logger(options.proxy ? LogLevel.NONE : LogLevel.ERROR),
    ...(options.proxy && { proxy: gramjsProxy(options.proxy) }),
  });
  // Everything GramJS learns goes through its entity cache (invoke answers, updates): told on, so
  // the access hashes outlive this process (GramJS keeps them in memory only).
  const onPeers = options.onPeers;
  if (onPeers) {
    const cache = (client as unknown as { _entityCache: { add(entities: unknown): void } })._entityCache;
    const add = cache.add.bind(cache);
    cache.add = (entities) => {
      add(entities);
      const peers = learntPeers(entities);
      if (peers.length > 0) onPeers(peers);
    };
  }
  // GramJS retries a failed connection and answers `false`: the last error says why
  let lastError: unknown = null;
  client.onError = async (error) => {
    lastError = error;
  };
  return {
    connect: async () => {
      if ((await client.connect()) === false) throw lastError ?? new Error('could not connect to Telegram');
    },
    alive: () => client.connected === true,
    invoke: (request) => client.invoke(request as never),
    getInputEntity: (chatId) => client.getInputEntity(/^-?\d+$/.test(chatId) ? helpers.returnBigInt(chatId) : chatId),
    dialogs: async (limit) => {
      const list = await client.getDialogs({ limit });
      return list.map((d): UserDialog => {
        const entity = d.entity as
          | { broadcast?: boolean; creator?: boolean; adminRights?: unknown; participantsCount?: number; defaultBannedRights?: { sendMessages?: boolean } }
          | undefined;
        const kind = d.isUser ? 'user' : d.isChannel && !d.isGroup ? 'channel' : 'group';
        const mayPost = kind !== 'channel' || Boolean(entity?.creator || entity?.adminRights);
        return {
          chatId: String(d.id),
          title: d.title ?? d.name ?? null,
          kind,
          canSend: mayPost && !entity?.defaultBannedRights?.sendMessages,
          memberCount: typeof entity?.participantsCount === 'number' ? entity.participantsCount : null,
          peer: peerOfEntity(d.entity),
        };
      });
    },
    sendCode: async (phone) => (await client.sendCode({ apiId: options.apiId, apiHash: options.apiHash }, phone)).phoneCodeHash,
    signIn: async (phone, phoneCodeHash, code) => {
      try {
        const answer = await client.invoke(new Api.auth.SignIn({ phoneNumber: phone, phoneCodeHash, phoneCode: code }));
        // a number with no Telegram account: Metronome signs in, it never signs up
        if (answer instanceof Api.auth.AuthorizationSignUpRequired)
          throw new errors.RPCError('PHONE_NUMBER_UNOCCUPIED', new Api.auth.SignIn({ phoneNumber: phone, phoneCodeHash, phoneCode: code }), 400);
        return 'signed-in';
      } catch (error) {
        if (error instanceof errors.RPCError && error.errorMessage === 'SESSION_PASSWORD_NEEDED') return 'password-needed';
        throw error;
      }
    },
    qrLogin: async () => {
      try {
        const answer = await client.invoke(new Api.auth.ExportLoginToken({ apiId: options.apiId, apiHash: options.apiHash, exceptIds: [] }));
        if (answer instanceof Api.auth.LoginToken) return { kind: 'token', token: Buffer.from(answer.token), expiresAt: answer.expires * 1000 };
        if (answer instanceof Api.auth.LoginTokenSuccess) return { kind: 'signed-in' };
        // The account lives in another data centre: follow it there and import the token, as
        // GramJS's own signInUserWithQrCode does (client/auth.js); the session moves with it.
        // A StringSession reloads the key it was built from on every connect, so the switch would
        // bring the old data centre's key to the new one (which answers -404, and GramJS hangs):
        // the string's key is forgotten first, and the new data centre's key is made afresh.
        (string as unknown as { _key?: Buffer })._key = undefined;
        await (client as unknown as { _switchDC(dcId: number): Promise<unknown> })._switchDC(answer.dcId);
        const imported = await client.invoke(new Api.auth.ImportLoginToken({ token: answer.token }));
        if (imported instanceof Api.auth.LoginTokenSuccess) return { kind: 'signed-in' };
        throw new Error(`Telegram answered the imported login token with ${imported.className}`);
      } catch (error) {
        if (error instanceof errors.RPCError && error.errorMessage === 'SESSION_PASSWORD_NEEDED') return { kind: 'password-needed' };
        throw error;
      }
    },
    checkPassword: async (password) => {
      const settings = await client.invoke(new Api.account.GetPassword());
      await client.invoke(new Api.auth.CheckPassword({ password: await computeCheck(settings, password) }));
    },
    me: async () => {
      const user = await client.getMe();
      return { id: user.id.toString(), phone: user.phone ?? null };
    },
    session: () => string.save(),
    disconnect: async () => {
      await client.destroy();
    },
  };
};
