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

export type WhatsAppLogger = SocketConfig['logger'];

export interface WhatsAppSocketEvents {
  'connection.update': Partial<ConnectionState>;
  'creds.update': Partial<AuthenticationCreds>;
  /** partial changes, and every group in full after `groupFetchAllParticipating` */
  'groups.update': Partial<GroupMetadata>[];
  'groups.upsert': GroupMetadata[];
  /** a member leaving is a `remove` whose author is that member */
  'group-participants.update': BaileysEventMap['group-participants.update'];
  /** a server ERROR ack of a sent one (status ERROR, its code first in messageStubParameters), later receipts */
  'messages.update': BaileysEventMap['messages.update'];
  'message-receipt.update': BaileysEventMap['message-receipt.update'];
  /** live: `notify`; held by the server while no socket was open: `append` */
  'messages.upsert': { messages: WAMessage[]; type: MessageUpsertType; requestId?: string };
  'message-capping.update': BaileysEventMap['message-capping.update'];
}

/** The part of a Baileys socket Metronome uses (the compiler checks `baileysSocketFactory` against it); tests pass a fake. */
export interface WhatsAppSocket {
  ev: {
    on<E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void): void;
    off<E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void): void;
  };
  /** frames as Baileys dispatches them (`CB:<tag>,<attr>:<value>`): retry receipts are read here */
  ws: { on(event: string, listener: (frame: BinaryNode) => void): unknown };
  user: { id: string; lid?: string } | undefined;
  signalRepository: { lidMapping: LidMapping };
  sendMessage: WASocket['sendMessage'];
  sendPresenceUpdate: WASocket['sendPresenceUpdate'];
  relayMessage: WASocket['relayMessage'];
  groupMetadata: WASocket['groupMetadata'];
  groupFetchAllParticipating: WASocket['groupFetchAllParticipating'];
  requestPairingCode: WASocket['requestPairingCode'];
  waUploadToServer: WASocket['waUploadToServer'];
  fetchAccountReachoutTimelock: WASocket['fetchAccountReachoutTimelock'];
  fetchNewChatMessageCap: WASocket['fetchNewChatMessageCap'];
  end(error: Error | undefined): Promise<void> | void;
  logout(msg?: string): Promise<void>;
}

export interface WhatsAppSocketConfig {
  auth: AuthenticationState;
  cachedGroupMetadata: (jid: string) => Promise<GroupMetadata | undefined>;
  getMessage: (key: WAMessageKey) => Promise<proto.IMessage | undefined>;
  logger: WhatsAppLogger;
  connectTimeoutMs: number;
  defaultQueryTimeoutMs: number;
  version?: [number, number, number];
  /** one try: the auth state keeps what was refused */
  transactionOpts?: SocketConfig['transactionOpts'];
  waWebSocketUrl?: string;
  customUploadHosts?: SocketConfig['customUploadHosts'];
  agent?: SocketConfig['agent'];
  fetchAgent?: SocketConfig['fetchAgent'];
  /** absent: Baileys' own, which goes with the socket */
  userDevicesCache?: SocketConfig['userDevicesCache'];
}

export type WhatsAppSocketFactory = (accountId: string, config: WhatsAppSocketConfig) => WhatsAppSocket;

export const baileysSocketFactory: WhatsAppSocketFactory = (_accountId, config) => {
  // Baileys warns at each new socket that history sync is off (on purpose, below): a line per connect, each scrubbed of secrets.
  const level = config.logger.level;
  if (['trace', 'debug', 'info', 'warn'].includes(level)) config.logger.level = 'error';
  try {
    return makeWASocket({
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
  } finally {
    config.logger.level = level;
  }
};
