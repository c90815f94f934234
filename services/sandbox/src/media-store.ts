// The fake platform's media refs: what each upload stored, and whether a send may use a ref.
import type { MediaRecord } from './platform-types.js';

/** A media ref stays usable this long after its upload (CONTRACT §5). */
export const MEDIA_REF_TTL_MS = 24 * 60 * 60 * 1000;

export class MediaStore {
  private records = new Map<string, MediaRecord>();

  add(record: MediaRecord): void {
    this.records.set(record.mediaRef, record);
  }

  get(mediaRef: string): MediaRecord | undefined {
    return this.records.get(mediaRef);
  }

  /** Why `account` may not send `mediaRef` at `now` (CONTRACT §5 `media_ref_invalid`: upload again), or null. */
  problem(account: string, mediaRef: string, now: number): string | null {
    const m = this.records.get(mediaRef);
    if (m === undefined) return 'unknown mediaRef';
    if (m.account !== account) return 'mediaRef belongs to another account';
    if (now - m.uploadedAt >= MEDIA_REF_TTL_MS) return 'mediaRef expired';
    return null;
  }

  /** Forgets every ref, as a restarted platform would; returns how many there were. */
  forget(): number {
    const count = this.records.size;
    this.records.clear();
    return count;
  }
}
