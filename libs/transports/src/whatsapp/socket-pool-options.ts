// What a socket pool is built from: its lease, auth store, clock and the hooks it tells.
import type { ChatDirectorySink, Clock } from '@metronome/core';
import type { ProxyReport } from '../proxy.js';
import type { WhatsAppAuthStore } from './auth-state.js';
import type { OverlimitBackoff } from './classify.js';
import type { IncomingText } from './incoming.js';
import type { SentMessageStore } from './sent-messages.js';
import type { MessageRefusal } from './message-status.js';
import type { NewChatLimitStore } from './new-chats.js';
import type { MessageReceipt } from './message-receipts.js';
import type { SocketLease } from './socket-lease.js';
import type { WhatsAppLogger, WhatsAppSocketFactory } from './socket.js';
import type { Timers } from './timers.js';

export interface WhatsAppSocketPoolOptions {
  /** the account's proxy URL, opened (docs/platforms.md, "Proxy"), read at each connection; absent or null: none */
  proxyOf?: (accountId: string) => Promise<string | null>;
  /** told whether a socket through an account's proxy opened, or why the proxy failed */
  reportProxy?: ProxyReport;
  /** this replica's name on the lease (unique per process) */
  holderId: string;
  lease: SocketLease;
  auth: WhatsAppAuthStore;
  /** SECRETS_KEY first (seals and opens), then retired keys (open only) */
  secretsKeys: Buffer[];
  makeSocket: WhatsAppSocketFactory;
  clock: Clock;
  logger: WhatsAppLogger;
  /** how long the lease outlives its last renewal, ms */
  leaseTtlMs?: number;
  /** how often leases are renewed and hand-over requests looked for, ms */
  renewEveryMs?: number;
  /**
   * How long a replica that finds the lease free waits before it connects, ms (default: one
   * renewal period and a quarter). A free lease usually means nobody has the socket; but after
   * Redis lost its data, a holder may still have it open until its next renewal, when it sees
   * the lease taken and closes. Waiting that out means the two connections never overlap, so
   * WhatsApp never replaces one because of us.
   */
  freshLeaseWaitMs?: number;
  /** how long a socket whose keys the store refused stays open for what it wrote last, ms (default 2 s) */
  keysRefusedCloseMs?: number;
  /** the longest a hand-over waits for in-flight work before the socket closes anyway, ms */
  drainMaxMs?: number;
  connectTimeoutMs?: number;
  /** the WhatsApp Web version sockets announce (resolveWhatsAppVersion); absent: Baileys' bundled one */
  version?: [number, number, number];
  /** where sockets connect (WHATSAPP_WS_URL); absent: WhatsApp's own server, Baileys' default */
  webSocketUrl?: string;
  /** `host:port` media are uploaded to first (WHATSAPP_UPLOAD_HOST); absent: the hosts WhatsApp names */
  uploadHost?: string;
  queryTimeoutMs?: number;
  groupCacheTtlMs?: number;
  /** how long a pairing QR is offered (Baileys' first QR lives 60 s; later ones are not shown), ms */
  qrTtlMs?: number;
  /** how long a pairing code is offered, ms */
  pairingCodeTtlMs?: number;
  /**
   * Told when a socket of this replica opens and when it closes (with why: 'handed over',
   * 'closed by the server', 'lease lost', …), for metrics: reconnections are what WhatsApp sees.
   */
  onSocket?: (event: { kind: 'opened' } | { kind: 'closed'; wasOpen: boolean; why: string }) => void;
  /**
   * Told of each text a person wrote to an account in a one-to-one chat (incoming.ts), while
   * this replica holds the account's socket; the sender reads opt-outs from them.
   */
  onIncomingText?: (accountId: string, message: IncomingText) => void;
  /** Told of each message this replica wrote that the server refused afterwards (463, 479…; message-status.ts). */
  onMessageRefused?: (refusal: MessageRefusal) => void;
  /** Told of each delivery / read receipt of the accounts' messages (message-receipts.ts); must not block. */
  onReceipt?: (receipt: MessageReceipt) => void;
  /**
   * The accounts' chat directory (CONTRACT §3): what the sockets' group events, sends and
   * incoming messages tell is written there, and a socket's first opening lists its groups
   * into it. Absent: only requested syncs (`syncDirectory`, with their own sink) write.
   */
  directory?: ChatDirectorySink;
  /** how the group listing backs off after `rate-overlimit` (default: as sends, 60 s doubling to 30 min) */
  directoryBackoff?: OverlimitBackoff;
  /** the shortest time between two listings on connect of one account on this replica, ms (default 10 min) */
  directoryResyncMinMs?: number;
  /** where sent messages are kept for re-sends, for any replica (absent: this replica's memory only) */
  sentMessages?: SentMessageStore;
  /** how long a sent message can be asked for again (WHATSAPP_RESEND_DAYS), ms; default 7 days */
  resendKeepMs?: number;
  /** where the accounts' new-chat limits are kept for every replica (PostgreSQL); absent: this process's memory */
  newChats?: NewChatLimitStore;
  /** told when WhatsApp starts holding an account's new chats (a 463, a lock, the cap reached), for metrics */
  onNewChatsHeld?: (accountId: string, code: string) => void;
  /** the directory's retry timers (default: real ones; tests pass a manual clock's) */
  timers?: Timers;
}
