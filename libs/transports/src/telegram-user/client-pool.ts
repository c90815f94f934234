import type { ProxySettings } from '@metronome/core';
import { describeProxyError, ProxyFailedError, type ProxyReport } from '../proxy.js';
import type { SocketLease } from '../whatsapp/socket-lease.js';
import type { UserClient, UserClientFactory, UserClientOptions } from './user-client.js';

export interface UserClientPoolOptions extends UserClientOptions {
  makeClient: UserClientFactory;
  /** the cluster-wide lease on an account's one connection (as WhatsApp's socket) */
  lease: SocketLease;
  /** this replica's name in the lease */
  holderId: string;
  leaseTtlMs?: number;
  renewEveryMs?: number;
  /** told whether a connection through an account's proxy opened or why it failed (the account shows it) */
  reportProxy?: ProxyReport;
}

/** The account's connection is held by another replica now: nothing was sent. */
export class ConnectionElsewhere extends Error {}

interface Held {
  /** the session string and the proxy URL it connected with */
  session: string;
  client: Promise<UserClient>;
  renew: NodeJS.Timeout;
}

/**
 * One live MTProto connection per account across all senders: only the holder of the account's
 * lease connects; it keeps the lease while connected and hands it over (disconnecting first)
 * when another replica asks. A changed session string (a new sign-in) replaces the connection.
 */
export class UserClientPool {
  private readonly held = new Map<string, Held>();
  private readonly ttlMs: number;

  constructor(private readonly o: UserClientPoolOptions) {
    this.ttlMs = o.leaseTtlMs ?? 10_000;
  }

  /** Whether another replica holds the account's connection now. */
  async heldElsewhere(accountId: string): Promise<boolean> {
    return (await this.o.lease.peek(accountId, this.o.holderId)) === 'other';
  }

  /**
   * The account's connected client; ConnectionElsewhere when another replica holds it,
   * ProxyFailedError when its proxy refused or failed. A new session or proxy reconnects.
   */
  async client(accountId: string, session: string, proxy: { url: string; settings: ProxySettings } | null = null): Promise<UserClient> {
    const key = proxy ? `${session}\u0000${proxy.url}` : session;
    const current = this.held.get(accountId);
    if (current && current.session === key) return current.client;
    if (current) await this.drop(accountId);
    const lease = await this.o.lease.acquire(accountId, this.o.holderId, this.ttlMs);
    if (lease === 'busy') throw new ConnectionElsewhere(`account ${accountId}'s Telegram connection is held by another sender`);
    const client = (async () => {
      const c = this.o.makeClient(session, { apiId: this.o.apiId, apiHash: this.o.apiHash, proxy: proxy?.settings ?? null });
      try {
        await c.connect();
      } catch (error) {
        await c.disconnect().catch(() => undefined);
        if (!proxy) throw error;
        // Through a proxy, a connection that does not open is the proxy's to explain.
        const failed = new ProxyFailedError(proxy.settings, describeProxyError(error));
        await this.o.reportProxy?.(accountId, proxy.settings, failed.message).catch(() => undefined);
        throw failed;
      }
      if (proxy) await this.o.reportProxy?.(accountId, proxy.settings, null).catch(() => undefined);
      return c;
    })();
    const renew = setInterval(() => void this.keep(accountId), this.o.renewEveryMs ?? Math.floor(this.ttlMs / 3));
    renew.unref();
    this.held.set(accountId, { session: key, client, renew });
    client.catch(() => this.drop(accountId));
    return client;
  }

  /** Disconnects the account's client and lets its lease go (signed out, handed over, closing). */
  async drop(accountId: string): Promise<void> {
    const h = this.held.get(accountId);
    if (!h) return;
    this.held.delete(accountId);
    clearInterval(h.renew);
    await h.client.then((c) => c.disconnect()).catch(() => undefined);
    await this.o.lease.release(accountId, this.o.holderId).catch(() => undefined);
  }

  private async keep(accountId: string): Promise<void> {
    const state = await this.o.lease.renew(accountId, this.o.holderId, this.ttlMs).catch(() => 'held' as const);
    if (state !== 'held') await this.drop(accountId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.held.keys()].map((id) => this.drop(id)));
  }
}
