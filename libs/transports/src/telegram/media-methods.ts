/** The kinds a Telegram file is filed under: a file_id is resent only by its kind's method ("can't use file of type Animation as Video"). */
export const FILE_KINDS = {
  photo: { method: 'sendPhoto', field: 'photo', action: 'upload_photo' },
  video: { method: 'sendVideo', field: 'video', action: 'upload_video' },
  animation: { method: 'sendAnimation', field: 'animation', action: 'upload_video' },
  audio: { method: 'sendAudio', field: 'audio', action: 'upload_document' },
  voice: { method: 'sendVoice', field: 'voice', action: 'upload_voice' },
  document: { method: 'sendDocument', field: 'document', action: 'upload_document' },
} as const;

export type FileKind = keyof typeof FILE_KINDS;

export type MediaMethod = (typeof FILE_KINDS)[FileKind];

export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

/** Any other image (SVG, BMP, TIFF, HEIC…) is refused by sendPhoto as IMAGE_PROCESS_FAILED. */
const PHOTO_TYPES = new Set(['image/jpeg', 'image/jpg', 'image/pjpeg', 'image/png', 'image/webp']);

/** JPEG/PNG/WebP up to 10 MB: photo; GIF: animation (a photo would freeze it); video/*: video; else a document, unchanged. */
export function uploadKind(contentType: string, size: number | null): FileKind {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (PHOTO_TYPES.has(type)) return size === null || size <= MAX_PHOTO_BYTES ? 'photo' : 'document';
  if (type === 'image/gif') return 'animation';
  if (type.startsWith('video/')) return 'video';
  return 'document';
}

/**
 * The file in a sent Message and the kind Telegram filed it under (a silent video may become an animation). An animation also
 * carries `document`, so it is looked at first; a photo's sizes come largest last.
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

/** `<kind>:<file_id>`, so the kind lives and dies with its file_id (which never holds ':'). */
export function fileRef(kind: FileKind, fileId: string): string {
  return `${kind}:${fileId}`;
}

/** A bare file_id (kept before kinds were) goes by its content type; if refused, the sender forgets it and uploads again. */
export function parseFileRef(ref: string, contentType: string): { kind: FileKind; fileId: string } {
  const at = ref.indexOf(':');
  const kind = at > 0 ? ref.slice(0, at) : '';
  if (Object.hasOwn(FILE_KINDS, kind)) return { kind: kind as FileKind, fileId: ref.slice(at + 1) };
  return { kind: uploadKind(contentType, null), fileId: ref };
}
