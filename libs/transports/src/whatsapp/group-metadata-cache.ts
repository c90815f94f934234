import type { Clock } from '@metronome/core';
import type { GroupMetadata } from '@whiskeysockets/baileys';

interface Cached {
  value: GroupMetadata;
  fetchedAt: number;
}

/**
 * For Baileys' `cachedGroupMetadata`: without it every group send looks the group up first, which usually earns `rate-overlimit`.
 * Entries are dropped when the socket reports a change, so a new member is never left out.
 */
export class GroupMetadataCache {
  private readonly entries = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<GroupMetadata>>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = 10 * 60_000,
    private readonly maxEntries = 50_000,
  ) {}

  async get(accountId: string, jid: string, fetch: (jid: string) => Promise<GroupMetadata>): Promise<GroupMetadata> {
    const key = `${accountId} ${jid}`;
    const hit = this.entries.get(key);
    if (hit && this.clock.now() - hit.fetchedAt < this.ttlMs) return hit.value;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const work = fetch(jid)
      .then((value) => {
        if (this.entries.size >= this.maxEntries) this.entries.clear();
        this.entries.set(key, { value, fetchedAt: this.clock.now() });
        return value;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, work);
    return work;
  }

  prime(accountId: string, groups: readonly GroupMetadata[]): void {
    if (this.entries.size + groups.length > this.maxEntries) return;
    const at = this.clock.now();
    for (const value of groups) this.entries.set(`${accountId} ${value.id}`, { value, fetchedAt: at });
  }

  peek(accountId: string, jid: string): GroupMetadata | undefined {
    return this.entries.get(`${accountId} ${jid}`)?.value;
  }

  invalidate(accountId: string, jid: string): void {
    this.entries.delete(`${accountId} ${jid}`);
  }

  /** Its socket went to another replica, which may see changes we miss. */
  forgetAccount(accountId: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${accountId} `)) this.entries.delete(key);
  }
}
