/**
 * The kinds a Telegram file is filed under, each sent by its own method. A file_id is sent
 * again only with the method of the kind it came back as: the Bot API refuses to change the
 * file type when resending by file_id ("can't use file of type Animation as Video").
 */
export const FILE_KINDS = {
  photo: { method: 'sendPhoto', field: 'photo', action: 'upload_photo' },
  video: { method: 'sendVideo', field: 'video', action: 'upload_video' },
  animation: { method: 'sendAnimation', field: 'animation', action: 'upload_video' },
  audio: { method: 'sendAudio', field: 'audio', action: 'upload_document' },
  voice: { method: 'sendVoice', field: 'voice', action: 'upload_voice' },
  document: { method: 'sendDocument', field: 'document', action: 'upload_document' },
} as const;

export type FileKind = keyof typeof FILE_KINDS;

/** The Bot API method that sends a media of a kind, the field naming the file, and its chat action. */
export type MediaMethod = (typeof FILE_KINDS)[FileKind];

/** sendPhoto takes at most 10 MB (10 × 1024 × 1024 bytes): a larger photo is refused. */
export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

/** The image formats sendPhoto accepts; any other image (SVG, BMP, TIFF, HEIC…) is refused as IMAGE_PROCESS_FAILED. */
const PHOTO_TYPES = new Set(['image/jpeg', 'image/jpg', 'image/pjpeg', 'image/png', 'image/webp']);

/**
 * The kind to upload a media as: a JPEG/PNG/WebP of at most 10 MB is a photo; a GIF an
 * animation (a photo would freeze it); video/* a video; anything else, other images and
 * larger photos included, a document (sent as a file, unchanged). `size` unknown: judged by
 * type only.
 */
export function uploadKind(contentType: string, size: number | null): FileKind {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (PHOTO_TYPES.has(type)) return size === null || size <= MAX_PHOTO_BYTES ? 'photo' : 'document';
  if (type === 'image/gif') return 'animation';
  if (type.startsWith('video/')) return 'video';
  return 'document';
}

/**
 * The file in a sent Message and the kind Telegram filed it under, to send the same file again
 * without uploading it. Telegram may file an upload under another kind than the method's (a
 * silent video becomes an animation, a video it cannot play a document). An animation also
 * carries `document` (for old clients), so animation is looked at first; a photo comes back in
 * several sizes, the largest last.
 */
export function sentFile(message: Record<string, unknown>): { kind: FileKind; fileId: string } | null {
  const photo = message['photo'];
  if (Array.isArray(photo) && photo.length > 0) {
    const largest = photo[photo.length - 1] as Record<string, unknown> | null;
    if (largest && typeof largest['file_id'] === 'string') return { kind: 'photo', fileId: largest['file_id'] };
  }
  for (const kind of ['animation', 'video', 'audio', 'voice', 'document'] as const) {
    const file = message[kind] as Record<string, unknown> | null | undefined;
    if (file && typeof file === 'object' && typeof file['file_id'] === 'string') return { kind, fileId: file['file_id'] };
  }
  return null;
}

/**
 * The reference the sender keeps for a sent file (media_uploads.ref): `<kind>:<file_id>`, so
 * the kind lives and dies with its file_id. A file_id never holds ':' (it is base64url).
 */
export function fileRef(kind: FileKind, fileId: string): string {
  return `${kind}:${fileId}`;
}

/**
 * A kept reference read back. A bare file_id (kept before kinds were) has no kind: it is sent
 * as its content type would be uploaded, and if Telegram refuses the kind, the sender forgets
 * it and uploads again (telegram-errors.ts: media_ref_invalid).
 */
export function parseFileRef(ref: string, contentType: string): { kind: FileKind; fileId: string } {
  const at = ref.indexOf(':');
  const kind = at > 0 ? ref.slice(0, at) : '';
  if (Object.hasOwn(FILE_KINDS, kind)) return { kind: kind as FileKind, fileId: ref.slice(at + 1) };
  return { kind: uploadKind(contentType, null), fileId: ref };
}
