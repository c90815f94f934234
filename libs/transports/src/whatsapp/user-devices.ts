import type { Clock } from '@metronome/core';
import type { SocketConfig } from '@whiskeysockets/baileys';
import type { WhatsAppLogger } from './socket.js';
import { delay } from './timers.js';

/** Baileys' `userDevicesCache`: a user's devices, by the user part of their JID. */
export type DeviceCache = NonNullable<SocketConfig['userDevicesCache']>;

/** Where the replicas share device lists (libs/redis `DeviceLists`): values are this module's JSON, each entry runs out after `ttlMs`. */
export interface DeviceListStore {
  /** in `users`' order, null where none; one round trip */
  get(accountId: string, users: string[]): Promise<(string | null)[]>;
  set(accountId: string, entries: { user: string; value: string }[], ttlMs: number): Promise<void>;
  del(accountId: string, users: string[]): Promise<void>;
}

export interface UserDevicesOptions {
  /** absent: this process only */
  store?: DeviceListStore;
  clock: Clock;
  logger: WhatsAppLogger;
  /** Baileys' own (DEFAULT_CACHE_TTLS.USER_DEVICES): no list is trusted longer than Baileys would */
  ttlMs?: number;
  /** entries kept in this process, all accounts together */
  maxEntries?: number;
  /** a store call not answered by then is a miss, ms */
  answerMs?: number;
  warnEveryMs?: number;
}

/** `devices` null: dropped by Baileys (a device change), so WhatsApp is asked, not the store. */
interface Entry {
  devices: unknown[] | null;
  expiresAt: number;
}

/**
 * Each account's recipients' device lists for Baileys, kept past the socket: in this process, then in the store the replicas share.
 * Without it a reconnect or a hand-over asks WhatsApp again for each chat: a USync query and a forced key fetch.
 * A failing or slow store is a miss (Baileys asks WhatsApp), never a failed send.
 */
export class UserDevices {
  private readonly accounts = new Map<string, Map<string, Entry>>();
  private size = 0;
  private warnedAt = Number.NEGATIVE_INFINITY;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(private readonly o: UserDevicesOptions) {
    this.ttlMs = o.ttlMs ?? 5 * 60_000;
    this.maxEntries = o.maxEntries ?? 100_000;
  }

  /** The cache for a new socket of the account; this process's entries of it go, as another replica may have changed them since. */
  forAccount(accountId: string): DeviceCache {
    this.forget(accountId);
    this.sweep();
    const cache = {
      get: async (user: string) => (await this.read(accountId, [user]))[user],
      mget: (users: string[]) => this.read(accountId, users),
      set: (user: string, value: unknown) => this.write(accountId, [{ key: user, value }]),
      mset: (entries: { key: string; value: unknown }[]) => this.write(accountId, entries),
      del: (user: string) => this.drop(accountId, [user]),
      mdel: (users: string[]) => this.drop(accountId, users),
      // Baileys never flushes device lists; the store's entries run out on their own
      flushAll: () => this.forget(accountId),
    };
    return cache as DeviceCache;
  }

  /** entries kept in this process */
  get kept(): number {
    return this.size;
  }

  private async read(accountId: string, users: string[]): Promise<Record<string, unknown[] | undefined>> {
    const now = this.o.clock.now();
    const found: Record<string, unknown[] | undefined> = {};
    const missing: string[] = [];
    const kept = this.accounts.get(accountId);
    for (const user of users) {
      const entry = kept?.get(user);
      if (!entry || entry.expiresAt <= now) missing.push(user);
      else if (entry.devices) found[user] = entry.devices;
    }
    const store = this.o.store;
    if (missing.length === 0 || !store) return found;
    const stored = await this.ask('read', () => store.get(accountId, missing));
    stored?.forEach((raw, i) => {
      const user = missing[i]!;
      // written or dropped by the socket while the store answered: that is newer
      const meanwhile = this.accounts.get(accountId)?.get(user);
      const entry = meanwhile && meanwhile.expiresAt > now ? meanwhile : raw === null ? null : parseEntry(raw);
      if (!entry || entry.expiresAt <= now) return;
      if (entry !== meanwhile) this.keep(accountId, user, entry);
      if (entry.devices) found[user] = entry.devices;
    });
    return found;
  }

  private async write(accountId: string, entries: { key: string; value: unknown }[]): Promise<void> {
    const lists = entries.filter((e) => Array.isArray(e.value));
    if (lists.length === 0) return;
    const expiresAt = this.o.clock.now() + this.ttlMs;
    for (const { key, value } of lists) this.keep(accountId, key, { devices: value as unknown[], expiresAt });
    const store = this.o.store;
    if (!store) return;
    const values = lists.map(({ key, value }) => ({ user: key, value: JSON.stringify({ expiresAt, devices: value }) }));
    await this.ask('write', () => store.set(accountId, values, this.ttlMs));
  }

  private async drop(accountId: string, users: string[]): Promise<void> {
    if (users.length === 0) return;
    // kept as dropped: a store that missed the delete cannot bring the old list back to this socket
    const expiresAt = this.o.clock.now() + this.ttlMs;
    for (const user of users) this.keep(accountId, user, { devices: null, expiresAt });
    const store = this.o.store;
    if (store) await this.ask('delete', () => store.del(accountId, users));
  }

  private keep(accountId: string, user: string, entry: Entry): void {
    let kept = this.accounts.get(accountId);
    if (!kept) this.accounts.set(accountId, (kept = new Map()));
    if (kept.delete(user)) this.size--;
    if (this.size >= this.maxEntries) this.evict();
    kept.set(user, entry);
    this.size++;
  }

  private forget(accountId: string): void {
    this.size -= this.accounts.get(accountId)?.size ?? 0;
    this.accounts.delete(accountId);
  }

  /** Drops what ran out: entries are kept in the order written, so each account's oldest come first. */
  private sweep(): void {
    const now = this.o.clock.now();
    for (const [accountId, kept] of this.accounts) {
      for (const [user, entry] of kept) {
        if (entry.expiresAt > now) break;
        kept.delete(user);
        this.size--;
      }
      if (kept.size === 0) this.accounts.delete(accountId);
    }
  }

  private evict(): void {
    this.sweep();
    if (this.size < this.maxEntries) return;
    for (const [accountId, kept] of this.accounts) {
      const oldest = kept.keys().next();
      if (oldest.done) continue;
      kept.delete(oldest.value);
      this.size--;
      if (kept.size === 0) this.accounts.delete(accountId);
      return;
    }
  }

  private async ask<T>(what: string, call: () => Promise<T>): Promise<T | null> {
    const ms = this.o.answerMs ?? 200;
    const timer = delay(ms);
    try {
      const late = timer.promise.then((): never => {
        throw new Error(`no answer within ${ms} ms`);
      });
      return await Promise.race([call(), late]);
    } catch (err) {
      const now = this.o.clock.now();
      if (now - this.warnedAt >= (this.o.warnEveryMs ?? 60_000)) {
        this.warnedAt = now;
        this.o.logger.warn({ err, what }, 'whatsapp device lists: the shared store failed, so Baileys asks WhatsApp');
      }
      return null;
    } finally {
      timer.cancel();
    }
  }
}

function parseEntry(raw: string): Entry | null {
  try {
    const entry = JSON.parse(raw) as Partial<Entry>;
    return typeof entry.expiresAt === 'number' && Array.isArray(entry.devices) ? { devices: entry.devices, expiresAt: entry.expiresAt } : null;
  } catch {
    return null;
  }
}
