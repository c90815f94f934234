import { Api, errors, helpers, TelegramClient } from 'telegram';
import { Logger, LogLevel } from 'telegram/extensions/Logger.js';
import { computeCheck } from 'telegram/Password.js';
import { StringSession } from 'telegram/sessions/index.js';
import { NewMessage, type NewMessageEvent } from 'telegram/events/index.js';
import type { ProxyInterface } from 'telegram/network/connection/TCPMTProxy.js';
import type { ProxySettings, TelegramPeer } from '@metronome/core';
import { incomingUserText, type IncomingUserText } from './incoming.js';
import { learntPeers, peerOfEntity } from './peer-entities.js';
import type { TelegramEndpoint } from './server-endpoint.js';

export interface UserDialog {
  /** a user's id, `-{id}` for a basic group, `-100{id}` for a channel or supergroup */
  chatId: string;
  title: string | null;
  kind: 'user' | 'group' | 'channel';
  canSend: boolean;
  memberCount: number | null;
  peer: TelegramPeer | null;
}

/** The part of GramJS's TelegramClient Metronome uses (tests run it against test/helpers/wire-telegram.ts). */
export interface UserClient {
  connect(): Promise<void>;
  /** false while GramJS reconnects, and for good once it gave up */
  alive(): boolean;
  invoke(request: Api.AnyRequest): Promise<unknown>;
  getInputEntity(chatId: string): Promise<Api.TypeInputPeer>;
  dialogs(limit: number): Promise<UserDialog[]>;
  sendCode(phone: string): Promise<string>;
  /** 'password-needed' when two-step verification is set */
  signIn(phone: string, phoneCodeHash: string, code: string): Promise<'signed-in' | 'password-needed'>;
  /** auth.exportLoginToken, asked again to see whether the QR was scanned. */
  qrLogin(): Promise<{ kind: 'token'; token: Buffer; expiresAt: number } | { kind: 'signed-in' } | { kind: 'password-needed' }>;
  checkPassword(password: string): Promise<void>;
  me(): Promise<{ id: string; phone: string | null }>;
  /** the session string now (GramJS may have moved the account to another data centre) */
  session(): string;
  disconnect(): Promise<void>;
}

export interface UserClientOptions {
  apiId: number;
  apiHash: string;
  proxy?: ProxySettings | null;
  dc?: TelegramEndpoint | null;
  onPeers?: ((peers: TelegramPeer[]) => void) | undefined;
  /** a person's private text on this connection (opt-outs and replies); unset: updates are not read */
  onIncomingText?: ((message: IncomingUserText) => void) | undefined;
}

/** SOCKS5 (GramJS connects to addresses, so it resolves names) or MTProxy. */
export function gramjsProxy(p: ProxySettings): ProxyInterface {
  if (p.scheme === 'mtproxy') return { ip: p.host, port: p.port, secret: p.secret!, MTProxy: true };
  return { ip: p.host, port: p.port, socksType: 5, ...(p.username !== null && { username: p.username, password: p.password ?? '' }) };
}

/** Builds the client of one account from its (opened) session string; '' for a sign-in. */
export type UserClientFactory = (session: string, options: UserClientOptions) => UserClient;

/** GramJS with its own flood sleeping off, so every FLOOD_WAIT reaches Metronome's pace. */
export const gramjsClientFactory: UserClientFactory = (session, options) => {
  const string = new StringSession(session);
  // GramJS in Node connects to port 80 of a data centre (443 over WSS), whatever the session says
  if (!session && options.dc) string.setDC(options.dc.dcId, options.dc.ip, 80);
  // GramJS prints a failed connection's error whole, proxy password included: through a proxy it prints nothing (onError below).
  const client = new TelegramClient(string, options.apiId, options.apiHash, {
    floodSleepThreshold: 0,
    connectionRetries: 3,
    autoReconnect: true,
    baseLogger: new Logger(options.proxy ? LogLevel.NONE : LogLevel.ERROR),
    ...(options.proxy && { proxy: gramjsProxy(options.proxy) }),
  });
  // GramJS keeps access hashes in memory only: what its entity cache learns is told on, to outlive this process.
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
  const onText = options.onIncomingText;
  if (onText) {
    // GramJS's own NewMessage event reads updateShortMessage and updateNewMessage (events/NewMessage.js)
    const read = (event: NewMessageEvent) => {
      const message = incomingUserText(event.message, (event as unknown as { _entities?: Map<string, unknown> })._entities);
      if (message) onText(message);
    };
    client.addEventHandler(read, new NewMessage({ incoming: true }));
  }
  let lastError: unknown = null;
  client.onError = async (error) => {
    lastError = error;
  };
  return {
    connect: async () => {
      if ((await client.connect()) === false) throw lastError ?? new Error('could not connect to Telegram');
      // Telegram sends updates to a session that called a method (api/updates: updates.getState); a refusal shows on the next request
      if (onText) await client.invoke(new Api.updates.GetState()).catch(() => undefined);
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
        // Another data centre: follow it, as GramJS's signInUserWithQrCode does. A StringSession would bring the old DC's key
        // along (answered -404, and GramJS hangs), so the string's key is forgotten and the new DC's made afresh.
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
