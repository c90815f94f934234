import type { ProxySettings, TelegramPeer } from '@metronome/core';
import { describeProxyError, ProxyFailedError, type ProxyReport } from '../proxy.js';
import type { SocketLease } from '../whatsapp/socket-lease.js';
import type { IncomingUserText } from './incoming.js';
import type { UserClient, UserClientFactory, UserClientOptions } from './user-client.js';

export interface UserClientPoolOptions extends Omit<UserClientOptions, 'onIncomingText'> {
  makeClient: UserClientFactory;
  /** the cluster-wide lease on an account's one connection (as WhatsApp's socket) */
  lease: SocketLease;
  holderId: string;
  leaseTtlMs?: number;
  renewEveryMs?: number;
  /** the longest a connection may take to open (a proxy that accepts and then stalls); default 15 s */
  connectTimeoutMs?: number;
  reportProxy?: ProxyReport;
  onPeersLearnt?: (accountId: string, peers: TelegramPeer[]) => void;
  /** a person's private text on an account's connection: read as an opt-out and a reply (CONTRACT §3) */
  onIncomingText?: (accountId: string, message: IncomingUserText) => void;
}

export class ConnectionElsewhere extends Error {}

export class ConnectTimeout extends Error {}

/** This replica closed the account's connection itself (a stop, a hand-over): no request was begun on it. */
export class ClosedHere extends Error {}

interface Held {
  key: string;
  client: Promise<UserClient>;
  renew: NodeJS.Timeout;
  connected: UserClient | null;
  deadRenewals: number;
  usedAt: number;
}

/**
 * One MTProto connection per account across all senders: only the lease holder connects, and hands it over when asked. The entry
 * is made before the first await, so concurrent first uses share one client; a client GramJS gave up on (dead at two renewals)
 * is dropped and its lease let go, so another replica may take the account.
 */
export class UserClientPool {
  private readonly held = new Map<string, Held>();
  private readonly ttlMs: number;
  private readonly letGo = new WeakSet<UserClient>();
  private closed = false;

  constructor(private readonly o: UserClientPoolOptions) {
    this.ttlMs = o.leaseTtlMs ?? 10_000;
  }

  async heldElsewhere(accountId: string): Promise<boolean> {
    return (await this.o.lease.peek(accountId, this.o.holderId)) === 'other';
  }

  /** ConnectionElsewhere, ProxyFailedError or ConnectTimeout when there is none; a new session or proxy reconnects. */
  async client(accountId: string, session: string, proxy: { url: string; settings: ProxySettings } | null = null, askHandover = true): Promise<UserClient> {
    if (this.closed) throw new ClosedHere('the sender is stopping');
    const key = proxy ? `${session}\u0000${proxy.url}` : session;
    const current = this.held.get(accountId);
    if (current?.key === key) {
      current.usedAt = Date.now();
      return current.client;
    }
    const previous = current ? this.drop(accountId) : Promise.resolve();
    const client = previous.then(() => this.open(accountId, session, proxy, askHandover));
    const renew = setInterval(() => void this.keep(accountId, client), this.o.renewEveryMs ?? Math.floor(this.ttlMs / 3));
    renew.unref();
    const held: Held = { key, client, renew, connected: null, deadRenewals: 0, usedAt: Date.now() };
    this.held.set(accountId, held);
    client.then((c) => (held.connected = c)).catch((error: unknown) => this.forget(accountId, held, !(error instanceof ConnectionElsewhere)));
    return client;
  }

  private async open(accountId: string, session: string, proxy: { url: string; settings: ProxySettings } | null, askHandover: boolean): Promise<UserClient> {
    const lease = await this.o.lease.acquire(accountId, this.o.holderId, this.ttlMs, askHandover);
    if (lease === 'busy') throw new ConnectionElsewhere(`account ${accountId}'s Telegram connection is held by another sender`);
    const { onPeersLearnt: learnt, onIncomingText: incoming } = this.o;
    const c = this.o.makeClient(session, {
      apiId: this.o.apiId,
      apiHash: this.o.apiHash,
      proxy: proxy?.settings ?? null,
      dc: this.o.dc ?? null,
      onPeers: learnt && ((peers) => learnt(accountId, peers)),
      onIncomingText: incoming && ((message) => incoming(accountId, message)),
    });
    try {
      await withTimeout(c.connect(), this.o.connectTimeoutMs ?? 15_000, () => new ConnectTimeout("Telegram's connection did not open in time"));
    } catch (error) {
      void c.disconnect().catch(() => undefined);
      if (!proxy) throw error;
      const failed = new ProxyFailedError(proxy.settings, describeProxyError(error));
      await this.o.reportProxy?.(accountId, proxy.settings, failed.message).catch(() => undefined);
      throw failed;
    }
    if (proxy) await this.o.reportProxy?.(accountId, proxy.settings, null).catch(() => undefined);
    return c;
  }

  /** The accounts this replica holds a connection of, and whether one was used within `busyMs` (a send may be on it). */
  heldAccounts(busyMs: number): { accountId: string; busy: boolean }[] {
    return [...this.held].map(([accountId, h]) => ({ accountId, busy: Date.now() - h.usedAt < busyMs }));
  }

  /** Closes the account's connection; `here`: this replica's own close (a hand-over, a stop), not a dead or refused one. */
  async drop(accountId: string, here = true): Promise<void> {
    const h = this.held.get(accountId);
    if (h) await this.forget(accountId, h, true, here);
  }

  /** Whether this replica closed `client` itself: a request not begun on it is no platform failure. */
  closedHere(client: UserClient): boolean {
    return this.letGo.has(client);
  }

  private async forget(accountId: string, h: Held, release: boolean, here = false): Promise<void> {
    if (this.held.get(accountId) !== h) return;
    this.held.delete(accountId);
    clearInterval(h.renew);
    // GramJS's disconnect waits on requests in flight; a client that stopped answering is not waited for
    await h.client.then((c) => (here && this.letGo.add(c), withTimeout(c.disconnect(), 5_000, () => new Error('disconnect timed out')))).catch(() => undefined);
    // This replica may have reconnected meanwhile under the same holder id: letting the lease go would allow a second connection.
    if (release && !this.held.has(accountId)) await this.o.lease.release(accountId, this.o.holderId).catch(() => undefined);
  }

  private async keep(accountId: string, client: Promise<UserClient>): Promise<void> {
    const h = this.held.get(accountId);
    if (h?.client !== client) return;
    h.deadRenewals = h.connected && !h.connected.alive() ? h.deadRenewals + 1 : 0;
    if (h.deadRenewals >= 2) return this.drop(accountId, false);
    const state = await this.o.lease.renew(accountId, this.o.holderId, this.ttlMs).catch(() => 'held' as const);
    if (state !== 'held') await this.drop(accountId);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.held.keys()].map((id) => this.drop(id)));
  }
}

/** `work`, or `error()` once `ms` pass first (the work itself is left to settle). */
export async function withTimeout<T>(work: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(error()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
