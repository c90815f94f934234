import type { ProxySettings } from '@metronome/core';
import type { AuthHandle } from './auth-state.js';
import type { WhatsAppFailure } from './classify.js';
import type { WhatsAppSocket } from './socket.js';

export type SocketRefusal =
  /** another replica holds the account's socket; it was asked to hand it over */
  | { reason: 'busy' }
  | { reason: 'not-paired' }
  /** PostgreSQL refused a write of the account's auth state: no socket until it takes it */
  | { reason: 'keys-unsaved' }
  | { reason: 'connect-failed'; failure: WhatsAppFailure }
  | { reason: 'proxy-failed'; message: string }
  /** this pool closed (or is closing) the account's socket itself: a stop, a hand-over, an idle close */
  | { reason: 'closed-here' };

/** Why the pool disposes of a socket WhatsApp closed first; every other reason is the pool's own close. */
export const CLOSED_BY_SERVER = 'closed by the server';

export class Connection {
  inFlight = 0;
  /** a pairing's reconnection after the phone accepts is the same socket's life */
  wasOpen = false;
  /** another replica asked for the socket: no new use, close once in-flight work is done */
  draining = false;
  drainingSince = 0;
  keysRefused = false;
  /** closed by this pool (hand-over, shutdown, a pairing that ended): its close event is expected */
  disposed = false;
  readonly ready: Promise<SocketRefusal | null>;
  private settle!: (value: SocketRefusal | null) => void;
  private settled = false;
  proxy: { url: string; settings: ProxySettings; probe: { host: string; port: number } } | null = null;
  private closedHere = false;
  private readonly onClosedHere = new Set<() => void>();

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

  /** Marks the socket closed; returns what those waiting for it to open are told. */
  dispose(why: string): SocketRefusal {
    this.disposed = true;
    if (why === CLOSED_BY_SERVER) return { reason: 'connect-failed', failure: { source: 'connection', statusCode: 428, message: why } };
    this.closedHere = true;
    for (const listener of this.onClosedHere) listener();
    this.onClosedHere.clear();
    return { reason: 'closed-here' };
  }

  /** Calls `listener` when this pool closes the socket itself (at once if it did), not when WhatsApp does; returns the unset. */
  whenClosedHere(listener: () => void): () => void {
    if (this.closedHere) listener();
    else this.onClosedHere.add(listener);
    return () => this.onClosedHere.delete(listener);
  }

  resolveReady(value: SocketRefusal | null): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(value);
  }
}
