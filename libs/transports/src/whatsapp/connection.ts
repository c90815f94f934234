import type { ProxySettings } from '@metronome/core';
import type { AuthHandle } from './auth-state.js';
import type { WhatsAppFailure } from './classify.js';
import type { WhatsAppSocket } from './socket.js';

/** Why the pool could not give a socket. */
export type SocketRefusal =
  /** another replica holds the account's socket; it was asked to hand it over */
  | { reason: 'busy' }
  /** the account has no paired device (never paired, or a new pairing is under way) */
  | { reason: 'not-paired' }
  /** PostgreSQL refused a write of the account's auth state: no socket until it takes it (unsaved-keys.ts) */
  | { reason: 'keys-unsaved' }
  /** the socket closed before it opened (logged out, replaced, unreachable…) */
  | { reason: 'connect-failed'; failure: WhatsAppFailure }
  /** the account's proxy refused or failed (`message` names it, never its login) */
  | { reason: 'proxy-failed'; message: string };

/** One account's live socket on this replica, while this replica holds its lease. */
export class Connection {
  /** sends and uploads running on the socket now */
  inFlight = 0;
  /** the socket opened at least once (a pairing's reconnection after the phone accepts is the same socket's life) */
  wasOpen = false;
  /** another replica asked for the socket: no new use, close once in-flight work is done */
  draining = false;
  drainingSince = 0;
  /** the store refused a write of its keys: no new use, closing (socket-pool.ts keysUnsaved) */
  keysRefused = false;
  /** closed by this pool (hand-over, shutdown, a pairing that ended): its close event is expected */
  disposed = false;
  /** settles when the socket opened (null) or could not (why) */
  readonly ready: Promise<SocketRefusal | null>;
  private settle!: (value: SocketRefusal | null) => void;
  private settled = false;
  /** the account's proxy the socket connects through (the URL, as read, and where a probe of it asks to go); null: none */
  proxy: { url: string; settings: ProxySettings; probe: { host: string; port: number } } | null = null;

  constructor(
    readonly accountId: string,
    readonly kind: 'send' | 'pair',
    public socket: WhatsAppSocket,
    readonly auth: AuthHandle,
  ) {
    this.ready = new Promise((resolve) => (this.settle = resolve));
  }

  get isSettled(): boolean {
    return this.settled;
  }

  resolveReady(value: SocketRefusal | null): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(value);
  }
}
