import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

/** The media a sender sends: its content, and the platform references uploaded per account (media_uploads). One method, one statement. */
export class MediaRefRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async find(accountId: string, mediaId: string, now: Date): Promise<{ ref: string; expiresAt: Date; contentType: string; filename: string | null } | null> {
    const row = await this.db
      .selectFrom('media_uploads as u')
      .innerJoin('media as m', 'm.id', 'u.media_id')
      .select(['u.ref', 'u.expires_at', 'm.content_type', 'm.filename'])
      .where('u.account_id', '=', accountId)
      .where('u.media_id', '=', mediaId)
      .where('u.expires_at', '>', now)
      .executeTakeFirst();
    return row ? { ref: row.ref, expiresAt: row.expires_at, contentType: row.content_type, filename: row.filename } : null;
  }

  async save(accountId: string, mediaId: string, ref: string, expiresAt: Date): Promise<void> {
    await this.db
      .insertInto('media_uploads')
      .values({ account_id: accountId, media_id: mediaId, ref, expires_at: expiresAt })
      .onConflict((oc) => oc.columns(['account_id', 'media_id']).doUpdateSet({ ref, expires_at: expiresAt, created_at: sql`now()` }))
      .execute();
  }

  /** Drops a media reference the platform refused, unless another upload has replaced it meanwhile. */
  async forget(accountId: string, mediaId: string, ref: string): Promise<void> {
    await this.db.deleteFrom('media_uploads').where('account_id', '=', accountId).where('media_id', '=', mediaId).where('ref', '=', ref).execute();
  }

  /** The media's bytes and what an upload needs to name them; null when the media or its bytes are gone. */
  async content(mediaId: string): Promise<{ contentType: string; sha256: string; filename: string | null; bytes: Buffer } | null> {
    const row = await this.db.selectFrom('media').select(['content_type', 'sha256', 'filename', 'bytes']).where('id', '=', mediaId).executeTakeFirst();
    if (!row?.bytes) return null;
    return { contentType: row.content_type, sha256: row.sha256, filename: row.filename, bytes: row.bytes };
  }
}
