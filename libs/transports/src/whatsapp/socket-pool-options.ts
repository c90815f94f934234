import type { ChatDirectorySink, Clock } from '@metronome/core';
import type { ProxyReport } from '../proxy.js';
import type { WhatsAppAuthStore } from './auth-state.js';
import type { OverlimitBackoff } from './classify.js';
import type { ConnectPace } from './connect-turns.js';
import type { IncomingText } from './incoming.js';
import type { SentMessageStore } from './sent-messages.js';
import type { MessageRefusal } from './message-status.js';
import type { NewChatLimitStore } from './new-chats.js';
import type { MessageReceipt } from './message-receipts.js';
import type { SocketLease } from './socket-lease.js';
import type { WhatsAppLogger, WhatsAppSocketFactory } from './socket.js';
import type { Timers } from './timers.js';
import type { UserDevices } from './user-devices.js';

export interface WhatsAppSocketPoolOptions {
  /** the account's proxy URL, opened (docs/platforms.md, "Proxy"), read at a connect whose caller names none */
  proxyOf?: (accountId: string) => Promise<string | null>;
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
  leaseTtlMs?: number;
  /** how long a socket handed to another replica is not opened here again (handed-on.ts), ms; 10 s */
  handoverPatienceMs?: number;
  renewEveryMs?: number;
  /** the cluster-wide connect pace a send's connect waits its turn of (connect-turns.ts); absent: sends connect at once */
  connectPace?: ConnectPace;
  /** Wait before connecting on a free lease: after Redis lost its data a holder may keep its socket until its next renewal. */
  freshLeaseWaitMs?: number;
  /** how long a socket whose keys the store refused stays open for what it wrote last, ms */
  keysRefusedCloseMs?: number;
  drainMaxMs?: number;
  connectTimeoutMs?: number;
  version?: [number, number, number];
  webSocketUrl?: string;
  uploadHost?: string;
  queryTimeoutMs?: number;
  groupCacheTtlMs?: number;
  /** how long a pairing QR is offered (Baileys' first QR lives 60 s; later ones are not shown), ms */
  qrTtlMs?: number;
  pairingCodeTtlMs?: number;
  /** Sockets opened and closed, with why: reconnections are what WhatsApp sees. */
  onSocket?: (event: { kind: 'opened' } | { kind: 'closed'; wasOpen: boolean; why: string }) => void;
  /** Texts a person wrote to an account in a one-to-one chat (the sender reads opt-outs from them). */
  onIncomingText?: (accountId: string, message: IncomingText) => void;
  onMessageRefused?: (refusal: MessageRefusal) => void;
  /** must not block */
  onReceipt?: (receipt: MessageReceipt) => void;
  /** The chat directory that socket events and a first opening's group listing write to; absent: only requested syncs write. */
  directory?: ChatDirectorySink;
  directoryBackoff?: OverlimitBackoff;
  /** the shortest time between two listings on connect of one account on this replica, ms */
  directoryResyncMinMs?: number;
  /** where sent messages are kept for re-sends by any replica (absent: this replica's memory) */
  sentMessages?: SentMessageStore;
  resendKeepMs?: number;
  /** the accounts' new-chat limits, shared by every replica (PostgreSQL); absent: this process's memory */
  newChats?: NewChatLimitStore;
  onNewChatsHeld?: (accountId: string, code: string) => void;
  timers?: Timers;
  /** recipients' device lists kept past each socket (and shared by the replicas); absent: Baileys' own, per socket */
  userDevices?: Pick<UserDevices, 'forAccount'>;
}
