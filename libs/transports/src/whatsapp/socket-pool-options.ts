// What a socket pool is built from: its lease, auth store, clock and the hooks it tells.
import type { Clock } from '@metronome/core';
import type { WhatsAppAuthStore } from './auth-state.js';
import type { IncomingText } from './incoming.js';
import type { SocketLease } from './socket-lease.js';
import type { WhatsAppLogger, WhatsAppSocketFactory } from './socket.js';

export interface WhatsAppSocketPoolOptions {
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
  /** the longest a hand-over waits for in-flight work before the socket closes anyway, ms */
  drainMaxMs?: number;
  connectTimeoutMs?: number;
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
}
