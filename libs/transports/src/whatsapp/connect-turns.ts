import type { SocketLease } from './socket-lease.js';
import type { Timers } from './timers.js';

export interface ConnectPace {
  take(now: number): Promise<number>;
}

export interface ConnectTurnsOptions {
  pace: ConnectPace;
  lease: SocketLease;
  holderId: string;
  clock: { now(): number };
  timers: Timers;
  random(): number;
}

/** Slots taken at once (one round trip): the pace's burst (`ConnectRate` burst), or a busy sender's takes fall under its rate. */
export const CONNECT_BURST = 5;

export const HOLDERS_OPEN_MS = 30_000;

/** Sends that must open a socket take turns of the cluster-wide connect pace (libs/redis `ConnectRate`, the account holder's) in order: up
 * to CONNECT_BURST takes per try for the whole queue, each wait jittered up to twice itself, so a dead sender's accounts never reconnect in one burst. */
export class ConnectTurns {
  private readonly queue: { accountId: string; at: number; go(ok: boolean): void }[] = [];
  private holders: ReadonlySet<string> = new Set();
  private pumping = false;
  private closed = false;

  constructor(private readonly o: ConnectTurnsOptions) {}

  /** True at its turn, at once when its lease is held (here, or asked of its holder); false once closed, or held elsewhere and kept by the holders. */
  async before(accountId: string): Promise<boolean> {
    if (this.closed) return false;
    const lease = await this.o.lease.peek(accountId, this.o.holderId).catch(() => 'free' as const);
    if (lease === 'other' && this.holders.has(accountId)) return false;
    if (lease !== 'free') return true;
    return new Promise((go) => {
      this.queue.push({ accountId, at: this.o.clock.now(), go });
      if (this.holders.has(accountId)) this.o.timers.setTimeout(() => void this.pump(), HOLDERS_OPEN_MS);
      void this.pump();
    });
  }

  /** The accounts the holders keep connected (issue 53) and plan where to open: a send to open one takes no turn for HOLDERS_OPEN_MS. */
  holdersOpen(accountIds: ReadonlySet<string>): void {
    this.holders = accountIds;
  }

  /** The account holder took a turn for this account already: a send waiting for its own goes now. */
  grant(accountId: string): void {
    const at = this.queue.findIndex((w) => w.accountId === accountId);
    if (at >= 0) this.queue.splice(at, 1)[0]!.go(true);
  }

  waiting(): Set<string> {
    return new Set(this.queue.map((w) => w.accountId));
  }

  /** Sends waiting to open these accounts give their turn up, told no as when closed: another sender is meant to open them. */
  withdraw(accountIds: ReadonlySet<string>): number {
    const gone = this.queue.filter((w) => accountIds.has(w.accountId));
    for (const w of gone) this.queue.splice(this.queue.indexOf(w), 1);
    for (const w of gone) w.go(false);
    return gone.length;
  }

  close(): void {
    this.closed = true;
    for (const w of this.queue.splice(0)) w.go(false);
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (;;) {
        const now = this.o.clock.now();
        const own = this.queue.filter((w) => !this.holders.has(w.accountId) || now - w.at >= HOLDERS_OPEN_MS);
        if (own.length === 0) break;
        // Redis away: the lease cannot be taken either, so the connect fails as it would unpaced
        const waits = await Promise.all(Array.from({ length: Math.min(CONNECT_BURST, own.length) }, () => this.o.pace.take(now).catch(() => 0)));
        const going = own.filter((w) => this.queue.includes(w)).slice(0, waits.filter((w) => w === 0).length);
        for (const w of going) this.queue.splice(this.queue.indexOf(w), 1);
        for (const w of going) w.go(true);
        const wait = Math.min(...waits);
        if (wait > 0) await new Promise<void>((resolve) => this.o.timers.setTimeout(resolve, wait * (1 + this.o.random())));
      }
    } finally {
      this.pumping = false;
    }
  }
}
