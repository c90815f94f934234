/** The Bot API method that sends a media of a content type, and the field naming the file. */
export type MediaMethod = { method: 'sendPhoto'; field: 'photo' } | { method: 'sendVideo'; field: 'video' } | { method: 'sendDocument'; field: 'document' };

/**
 * image/* → sendPhoto (except GIF: Telegram recompresses photos, which would freeze a GIF),
 * video/* → sendVideo, anything else → sendDocument (sent as a file, unchanged).
 */
export function mediaMethod(contentType: string): MediaMethod {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type.startsWith('image/') && type !== 'image/gif') return { method: 'sendPhoto', field: 'photo' };
  if (type.startsWith('video/')) return { method: 'sendVideo', field: 'video' };
  return { method: 'sendDocument', field: 'document' };
}

/**
 * The file_id of the media in a sent Message, to send the same file again without uploading it.
 * A photo comes back in several sizes (the largest last); Telegram may also file an upload
 * under another kind than the method's (a video it cannot play becomes a document, a GIF an
 * animation), so every kind is looked at.
 */
export function sentFileId(message: Record<string, unknown>): string | null {
  const photo = message['photo'];
  if (Array.isArray(photo) && photo.length > 0) {
    const largest = photo[photo.length - 1] as Record<string, unknown> | null;
    if (largest && typeof largest['file_id'] === 'string') return largest['file_id'];
  }
  for (const kind of ['video', 'animation', 'document', 'audio', 'voice', 'sticker']) {
    const file = message[kind] as Record<string, unknown> | null | undefined;
    if (file && typeof file === 'object' && typeof file['file_id'] === 'string') return file['file_id'];
  }
  return null;
}
