import type { AuthHandle } from './auth-state.js';
import type { SocketLease } from './socket-lease.js';
import type { WhatsAppLogger } from './socket.js';

export interface UnsavedKeysOptions {
  lease: SocketLease;
  holderId: string;
  leaseTtlMs: number;
  logger: WhatsAppLogger;
  inUse(accountId: string): boolean;
}

/**
 * Accounts whose auth state PostgreSQL refused: Baileys' cache holds keys the store does not, so the socket is closed and the
 * lease kept (no replica connects with the keys behind) until the store takes them.
 */
export class UnsavedKeys {
  private readonly behind = new Map<string, AuthHandle>();
  private renewing = false;

  constructor(private readonly o: UnsavedKeysOptions) {}

  has(accountId: string): boolean {
    return this.behind.has(accountId);
  }

  failed(accountId: string, auth: AuthHandle, error: unknown, kept: boolean): void {
    if (!kept)
      return this.o.logger.error({ err: error, accountId }, 'whatsapp auth state refused by the store: socket closed, it reconnects from the stored state');
    if (this.behind.get(accountId) === auth) return;
    this.behind.set(accountId, auth);
    this.o.logger.error(
      { err: error, accountId, code: 'keys_unsaved' },
      'whatsapp auth state not saved: socket closed, sends wait until PostgreSQL takes the keys, then the account reconnects (no new pairing needed)',
    );
  }

  /** True when nothing of the account is behind; the lease is kept for the caller. */
  async settle(accountId: string): Promise<boolean> {
    const auth = this.behind.get(accountId);
    if (!auth) return true;
    try {
      await auth.saveUnsaved();
    } catch {
      return false;
    }
    if (this.behind.get(accountId) === auth) this.behind.delete(accountId);
    this.o.logger.warn({ accountId }, 'whatsapp auth state saved after a failed write: the account can connect again');
    return true;
  }

  async renewAll(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      for (const accountId of [...this.behind.keys()]) {
        const r = await this.o.lease.renew(accountId, this.o.holderId, this.o.leaseTtlMs).catch(() => 'unknown' as const);
        if (r === 'lost') this.o.logger.error({ accountId }, 'whatsapp socket lease lost while keys are unsaved: another replica may connect with them behind');
        if ((await this.settle(accountId)) && !this.o.inUse(accountId)) await this.o.lease.release(accountId, this.o.holderId).catch(() => undefined);
      }
    } finally {
      this.renewing = false;
    }
  }

  /** Shutdown: one last try per account, then the leases go (what is still unsaved is lost, and logged). */
  async close(): Promise<void> {
    for (const accountId of [...this.behind.keys()]) {
      if (!(await this.settle(accountId))) this.o.logger.error({ accountId }, 'whatsapp auth state still unsaved at shutdown: recipients may ask for re-sends');
      this.behind.delete(accountId);
      await this.o.lease.release(accountId, this.o.holderId).catch(() => undefined);
    }
  }
}
