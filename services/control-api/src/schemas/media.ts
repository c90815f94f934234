import type { MediaRow } from '@metronome/db';
import { z } from 'zod';
import { id, iso, pageOf, pageQuery, text, time } from './common.js';

export const uploadQuery = z.object({
  filename: text(1, 255)
    .refine((v) => !/[\u0000-\u001f\u007f/\\]/.test(v), 'must not contain control characters or slashes')
    .optional(),
  tenantId: id.optional().describe('admin only: the tenant that owns the media'),
});

export const listMediaQuery = z.object({ ...pageQuery });

export const media = z
  .object({
    id,
    tenantId: id,
    contentType: z.string(),
    size: z.number().int(),
    sha256: z.string().describe('hex digest of the bytes'),
    filename: z.string().nullable(),
    createdAt: time,
  })
  .meta({ id: 'Media' });

export const mediaPage = pageOf(media);

export function mediaView(m: MediaRow): z.output<typeof media> {
  return { id: m.id, tenantId: m.tenantId, contentType: m.contentType, size: m.size, sha256: m.sha256, filename: m.filename, createdAt: iso(m.createdAt) };
}

// type/subtype per RFC 9110 token rules; parameters (`; charset=…`) are dropped.
const MEDIA_TYPE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,127})\/([!#$%&'*+.^_`|~0-9A-Za-z-]{1,127})\s*(;.*)?$/;

/** The media type of a Content-Type header, lower-cased without parameters; null when malformed. */
export function mediaTypeOf(header: string | undefined): string | null {
  const match = header === undefined ? null : MEDIA_TYPE.exec(header.trim());
  return match ? `${match[1]}/${match[2]}`.toLowerCase() : null;
}
