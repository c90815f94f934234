import type { SendFailure } from '@metronome/core';
import type { SendRepository } from '@metronome/db';
import type { Transport, TransportAccount } from '@metronome/transports';

export type MediaRef = { ok: true; ref: string; contentType: string; filename: string | null } | { ok: false; result: SendFailure };

interface Cached {
  ref: string;
  expiresAt: number;
  contentType: string;
  filename: string | null;
}

/**
 * Each distinct media is uploaded once per account: the reference is kept in PostgreSQL
 * (shared by every replica, surviving a crash) and in memory, and parallel chats asking for
 * the same media wait for one upload instead of starting their own.
 */
export class MediaRefs {
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<MediaRef>>();

  constructor(private readonly repo: SendRepository) {}

  async resolve(transport: Transport, account: TransportAccount, mediaId: string, now: number): Promise<MediaRef> {
    const key = `${account.id}:${mediaId}`;
    const hit = this.cache.get(key);
    // a reference about to expire is renewed rather than used mid-run
    if (hit && hit.expiresAt > now + 60_000) return { ok: true, ref: hit.ref, contentType: hit.contentType, filename: hit.filename };
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const work = this.load(transport, account, mediaId, now, key).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, work);
    return work;
  }

  private async load(transport: Transport, account: TransportAccount, mediaId: string, now: number, key: string): Promise<MediaRef> {
    const stored = await this.repo.mediaRef(account.id, mediaId, new Date(now + 60_000));
    if (stored) {
      this.remember(key, { ref: stored.ref, expiresAt: stored.expiresAt.getTime(), contentType: stored.contentType, filename: stored.filename });
      return { ok: true, ref: stored.ref, contentType: stored.contentType, filename: stored.filename };
    }
    const content = await this.repo.mediaContent(mediaId);
    if (!content) return { ok: false, result: { kind: 'rejected', code: 'media_missing', message: `media ${mediaId} no longer exists` } };
    const prepared = await transport.prepareMedia(account, { mediaId, ...content });
    if (!prepared.ok) return prepared;
    await this.repo.saveMediaRef(account.id, mediaId, prepared.ref, prepared.expiresAt);
    this.remember(key, { ref: prepared.ref, expiresAt: prepared.expiresAt.getTime(), contentType: content.contentType, filename: content.filename });
    return { ok: true, ref: prepared.ref, contentType: content.contentType, filename: content.filename };
  }

  private remember(key: string, value: Cached): void {
    if (this.cache.size > 50_000) this.cache.clear();
    this.cache.set(key, value);
  }
}
