import type { LidMapping } from './lid-identity.js';
import makeWASocket, {
  Browsers,
  type BaileysEventMap,
  type AuthenticationCreds,
  type AuthenticationState,
  type BinaryNode,
  type ConnectionState,
  type GroupMetadata,
  type MessageUpsertType,
  type SocketConfig,
  type WAMessage,
  type WAMessageKey,
  type WASocket,
  type proto,
} from '@whiskeysockets/baileys';

/** The logger Baileys takes (a pino logger satisfies it). */
export type WhatsAppLogger = SocketConfig['logger'];

/** The events of a Baileys socket this module listens to. */
export interface WhatsAppSocketEvents {
  'connection.update': Partial<ConnectionState>;
  'creds.update': Partial<AuthenticationCreds>;
  /** partial changes (a rename, announce mode…), and every group in full after `groupFetchAllParticipating` */
  'groups.update': Partial<GroupMetadata>[];
  /** groups the account was put in (created with it) */
  'groups.upsert': GroupMetadata[];
  /** members added, removed (a member leaving is a `remove` whose author is that member), promoted, demoted */
  'group-participants.update': BaileysEventMap['group-participants.update'];
  /** changes to messages: a server ERROR ack of a sent one (status ERROR, its code first in messageStubParameters), later receipts */
  'messages.update': BaileysEventMap['messages.update'];
  /** groups: a member's delivery or read of a message (Baileys handleReceipt) */
  'message-receipt.update': BaileysEventMap['message-receipt.update'];
  /** messages received (live: `notify`; held by the server while no socket was open: `append`) or sent */
  'messages.upsert': { messages: WAMessage[]; type: MessageUpsertType; requestId?: string };
  /** WhatsApp's cap on messages to new chats, as pushed (new-chats.ts) */
  'message-capping.update': BaileysEventMap['message-capping.update'];
}

/**
 * The part of a Baileys socket (`makeWASocket`'s result) that Metronome uses. The real socket
 * satisfies it (the compiler checks `baileysSocketFactory` below); tests pass a fake network.
 */
export interface WhatsAppSocket {
  ev: {
    on<E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void): void;
    off<E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void): void;
  };
  /** the socket's frames as Baileys dispatches them (`CB:<tag>,<attr>:<value>`): retry receipts are read here */
  ws: { on(event: string, listener: (frame: BinaryNode) => void): unknown };
  /** the account's own identity (Baileys: `creds.me`): its phone-number JID and, once connected, its LID */
  user: { id: string; lid?: string } | undefined;
  /** Baileys' LID ↔ phone-number mapping of the account (lid-identity.ts) */
  signalRepository: { lidMapping: LidMapping };
  sendMessage: WASocket['sendMessage'];
  sendPresenceUpdate: WASocket['sendPresenceUpdate'];
  relayMessage: WASocket['relayMessage'];
  groupMetadata: WASocket['groupMetadata'];
  groupFetchAllParticipating: WASocket['groupFetchAllParticipating'];
  requestPairingCode: WASocket['requestPairingCode'];
  waUploadToServer: WASocket['waUploadToServer'];
  /** asks WhatsApp for the account's reach-out time lock; told as a `connection.update` (new-chats.ts) */
  fetchAccountReachoutTimelock: WASocket['fetchAccountReachoutTimelock'];
  /** asks WhatsApp for the account's new-chat cap */
  fetchNewChatMessageCap: WASocket['fetchNewChatMessageCap'];
  end(error: Error | undefined): Promise<void> | void;
  logout(msg?: string): Promise<void>;
}

/** What a socket is built from: the account's auth state, the group cache, a quiet logger. */
export interface WhatsAppSocketConfig {
  auth: AuthenticationState;
  cachedGroupMetadata: (jid: string) => Promise<GroupMetadata | undefined>;
  /** a message this replica sent, for a recipient that asks for it again (decryption retry) */
  getMessage: (key: WAMessageKey) => Promise<proto.IMessage | undefined>;
  logger: WhatsAppLogger;
  connectTimeoutMs: number;
  defaultQueryTimeoutMs: number;
  /** the WhatsApp Web version to announce (client-version.ts); absent: Baileys' bundled one */
  version?: [number, number, number];
  /** how Baileys commits its key transactions (one try: the auth state keeps what was refused) */
  transactionOpts?: SocketConfig['transactionOpts'];
  /** the server to connect to (WHATSAPP_WS_URL); absent: WhatsApp's own, Baileys' default */
  waWebSocketUrl?: string;
  /** media hosts tried before those WhatsApp names (WHATSAPP_UPLOAD_HOST) */
  customUploadHosts?: SocketConfig['customUploadHosts'];
  /** the account's proxy (proxy-socket.ts): the websocket's agent, and the media uploads'; absent: none */
  agent?: SocketConfig['agent'];
  fetchAgent?: SocketConfig['fetchAgent'];
}

/** Opens a socket (real: `makeWASocket`; tests: a fake). The account id is for fakes and logs only. */
export type WhatsAppSocketFactory = (accountId: string, config: WhatsAppSocketConfig) => WhatsAppSocket;

/** The real thing: a Baileys socket to WhatsApp's servers. */
export const baileysSocketFactory: WhatsAppSocketFactory = (_accountId, config) =>
  makeWASocket({
    ...config,
    browser: Browsers.ubuntu('Metronome'),
    // Broadcasting needs no history; syncing it costs bandwidth and server round trips.
    syncFullHistory: false,
    shouldSyncHistoryMessage: () => false,
    // The operator's phone keeps receiving notifications while Metronome is connected.
    markOnlineOnConnect: false,
    // Link previews would make the sender fetch arbitrary URLs found in message texts.
    generateHighQualityLinkPreview: false,
  });
