import type { SendFailure } from '@metronome/core';
import type { MediaRefRepository } from '@metronome/db';
import type { MediaContent, OutgoingPart, Transport, TransportAccount } from '@metronome/transports';

/** A part ready to go: what to send, and the duty to report a media's first upload; or why it cannot go. */
export type PreparedPart = { part: OutgoingPart; upload?: MediaUpload } | { failure: SendFailure };

/** The first send of a media on a platform that uploads with a send ('with-first-send'): the content to upload, and the duty to report how that send went. */
export interface MediaUpload {
  content: MediaContent;
  /** Reports the uploading send: the platform's new reference when it delivered one, else null (then the next lane waiting for this media uploads it). */
  settle(ref: string | null): Promise<void>;
}

export type MediaRef =
  | { ok: true; ref: string; contentType: string; filename: string | null; upload?: undefined }
  /** no reference yet: this lane's send carries the content (`ref` is empty) */
  | { ok: true; ref: ''; contentType: string; filename: string | null; upload: MediaUpload }
  | { ok: false; result: SendFailure };

interface Cached {
  ref: string;
  expiresAt: number;
  contentType: string;
  filename: string | null;
}

/** One lane's first send of a media, which other lanes wait for. */
interface UploadSlot {
  done: Promise<void>;
  finish: () => void;
  waiters: number;
}

export interface MediaRefsOptions {
  /** How long lanes wait for an uploading send that never reports before the next one uploads instead. */
  uploadReportTimeoutMs?: number;
}

/** A reference that came back from a send is kept this long. Telegram file_ids do not expire; the bound only keeps a forgotten row from living forever. */
const SENT_REF_TTL_MS = 365 * 24 * 3_600_000;

/** Each media is uploaded once per account: its reference kept in PostgreSQL and in memory; parallel chats wait for one upload. */
export class MediaRefs {
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<MediaRef>>();
  private readonly uploads = new Map<string, UploadSlot>();
  private readonly uploadReportTimeoutMs: number;

  private readonly refs: MediaRefRepository;

  constructor(repos: { mediaRefs: MediaRefRepository }, options: MediaRefsOptions = {}) {
    this.refs = repos.mediaRefs;
    this.uploadReportTimeoutMs = options.uploadReportTimeoutMs ?? 120_000;
  }

  /** A media part ready to send: its reference, or its content when this send uploads it (the caller reports through `upload`). */
  async prepare(transport: Transport, account: TransportAccount, part: { mediaId: string; caption?: string | undefined }, now: number): Promise<PreparedPart> {
    const media = await this.resolve(transport, account, part.mediaId, now);
    if (!media.ok) return { failure: media.result };
    const { ref: mediaRef, contentType, filename, upload } = media;
    const outgoing: OutgoingPart = {
      type: 'media',
      mediaRef,
      contentType,
      filename,
      ...(part.caption ? { caption: part.caption } : {}),
      ...(upload ? { upload: upload.content } : {}),
    };
    return { part: outgoing, ...(upload ? { upload } : {}) };
  }

  async resolve(transport: Transport, account: TransportAccount, mediaId: string, now: number): Promise<MediaRef> {
    const key = `${account.id}:${mediaId}`;
    if (transport.mediaUpload === 'with-first-send') return this.resolveWithSend(account, mediaId, now, key);
    const hit = this.fresh(key, now);
    if (hit) return hit;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const work = this.load(transport, account, mediaId, now, key).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, work);
    return work;
  }

  /** Forgets a reference the platform refused (here and in PostgreSQL): the next send uploads again. */
  async forget(accountId: string, mediaId: string, ref: string): Promise<void> {
    const key = `${accountId}:${mediaId}`;
    if (this.cache.get(key)?.ref === ref) this.cache.delete(key);
    await this.refs.forget(accountId, mediaId, ref);
  }

  /** Whether `resolve` would answer at once from memory (no query, no upload, no wait). */
  cached(accountId: string, mediaId: string, now: number): boolean {
    return this.fresh(`${accountId}:${mediaId}`, now) !== null;
  }

  waiting(accountId: string, mediaId: string): number {
    return this.uploads.get(`${accountId}:${mediaId}`)?.waiters ?? 0;
  }

  private fresh(key: string, now: number): MediaRef | null {
    const hit = this.cache.get(key);
    // a reference about to expire is renewed rather than used mid-run
    if (hit && hit.expiresAt > now + 60_000) return { ok: true, ref: hit.ref, contentType: hit.contentType, filename: hit.filename };
    return null;
  }

  private async load(transport: Transport, account: TransportAccount, mediaId: string, now: number, key: string): Promise<MediaRef> {
    const stored = await this.refs.find(account.id, mediaId, new Date(now + 60_000));
    if (stored) {
      this.remember(key, { ref: stored.ref, expiresAt: stored.expiresAt.getTime(), contentType: stored.contentType, filename: stored.filename });
      return { ok: true, ref: stored.ref, contentType: stored.contentType, filename: stored.filename };
    }
    const content = await this.refs.content(mediaId);
    if (!content) return missing(mediaId);
    const prepared = await transport.prepareMedia(account, { mediaId, ...content });
    if (!prepared.ok) return prepared;
    await this.refs.save(account.id, mediaId, prepared.ref, prepared.expiresAt);
    this.remember(key, { ref: prepared.ref, expiresAt: prepared.expiresAt.getTime(), contentType: content.contentType, filename: content.filename });
    return { ok: true, ref: prepared.ref, contentType: content.contentType, filename: content.filename };
  }

  private async resolveWithSend(account: TransportAccount, mediaId: string, now: number, key: string): Promise<MediaRef> {
    for (;;) {
      const hit = this.fresh(key, now);
      if (hit) return hit;
      const pending = this.uploads.get(key);
      if (pending) {
        // After the wait the reference is cached, or the first send failed and the first waiter to get here becomes the uploader (the check and the take
        // are synchronous).
        pending.waiters++;
        await pending.done;
        pending.waiters--;
        continue;
      }
      const slot = newSlot();
      this.uploads.set(key, slot);
      const release = () => {
        if (this.uploads.get(key) === slot) this.uploads.delete(key);
        slot.finish();
      };
      try {
        const stored = await this.refs.find(account.id, mediaId, new Date(now + 60_000));
        if (stored) {
          this.remember(key, { ref: stored.ref, expiresAt: stored.expiresAt.getTime(), contentType: stored.contentType, filename: stored.filename });
          release();
          return { ok: true, ref: stored.ref, contentType: stored.contentType, filename: stored.filename };
        }
        const content = await this.refs.content(mediaId);
        if (!content) {
          release();
          return missing(mediaId);
        }
        return {
          ok: true,
          ref: '',
          contentType: content.contentType,
          filename: content.filename,
          upload: this.upload(key, account.id, { mediaId, ...content }, now, release),
        };
      } catch (error) {
        release();
        throw error;
      }
    }
  }

  private upload(key: string, accountId: string, content: MediaContent, now: number, release: () => void): MediaUpload {
    // An uploader that never reports must not hold the others forever.
    const timer = setTimeout(release, this.uploadReportTimeoutMs);
    timer.unref();
    let settled = false;
    return {
      content,
      settle: async (ref) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (ref === null) return release();
        const expiresAt = now + SENT_REF_TTL_MS;
        this.remember(key, { ref, expiresAt, contentType: content.contentType, filename: content.filename });
        release();
        await this.refs.save(accountId, content.mediaId, ref, new Date(expiresAt));
      },
    };
  }

  private remember(key: string, value: Cached): void {
    if (this.cache.size > 50_000) this.cache.clear();
    this.cache.set(key, value);
  }
}

function newSlot(): UploadSlot {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { done, finish, waiters: 0 };
}

function missing(mediaId: string): MediaRef {
  return { ok: false, result: { kind: 'rejected', code: 'media_missing', message: `media ${mediaId} no longer exists` } };
}
