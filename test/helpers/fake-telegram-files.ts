import { randomBytes } from 'node:crypto';

/**
 * How the fake Bot API (fake-telegram-bot-api.ts) judges media, as Telegram does: which kind an
 * upload is filed under, which photos sendPhoto takes, and the descriptions it refuses with.
 * The descriptions are Telegram's own, as bots receive them (TDLib's wording, passed on by the
 * Bot API server); see docs/platforms.md.
 */

export type FakeFileKind = 'photo' | 'video' | 'animation' | 'audio' | 'voice' | 'document';

/** Each send method and the field holding its file, which is also the kind it sends. */
export const MEDIA_METHODS: Record<string, FakeFileKind> = {
  sendPhoto: 'photo',
  sendVideo: 'video',
  sendAnimation: 'animation',
  sendAudio: 'audio',
  sendVoice: 'voice',
  sendDocument: 'document',
};

/** TDLib's names of file types, as its "can't use file of type … as …" refusal spells them. */
const TDLIB_NAMES: Record<FakeFileKind, string> = {
  photo: 'Photo',
  video: 'Video',
  animation: 'Animation',
  audio: 'Audio',
  voice: 'VoiceNote',
  document: 'Document',
};

/** sendPhoto's limit: 10 × 1024 × 1024 bytes. */
export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

/** A file_id resent with another kind's method: the Bot API does not change a file's type. */
export function kindMismatch(actual: FakeFileKind, expected: FakeFileKind): string {
  return `Bad Request: can't use file of type ${TDLIB_NAMES[actual]} as ${TDLIB_NAMES[expected]}`;
}

/**
 * Why sendPhoto refuses an uploaded file, or null: over 10 MB (checked first, before the image
 * is read), then anything but a JPEG, PNG or WebP, told by its bytes as Telegram reads them.
 */
export function photoRefusal(bytes: Buffer): string | null {
  if (bytes.length > MAX_PHOTO_BYTES)
    return `Bad Request: file of size ${bytes.length} bytes is too big for a photo; the maximum size is ${MAX_PHOTO_BYTES} bytes`;
  const format = imageFormat(bytes);
  if (format === null) return 'Bad Request: IMAGE_PROCESS_FAILED';
  // sendPhoto: "width and height must not exceed 10000 in total", "ratio must be at most 20"
  // (read here from a PNG's header only)
  const size = format === 'png' && bytes.length >= 24 ? { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) } : null;
  if (size && (size.width + size.height > 10_000 || Math.max(size.width, size.height) > 20 * Math.max(1, Math.min(size.width, size.height)))) {
    return 'Bad Request: PHOTO_INVALID_DIMENSIONS';
  }
  return null;
}

/** JPEG, PNG or WebP by their signatures, else null. */
export function imageFormat(bytes: Buffer): 'jpeg' | 'png' | 'webp' | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  return null;
}

/**
 * The kind Telegram files an upload under: a GIF sent as a document or an animation is an
 * animation; a content type the test chose (`fileAs`, e.g. a silent video filed as an
 * animation) is that kind; anything else the method's own kind.
 */
export function filedKind(method: FakeFileKind, contentType: string, fileAs: ReadonlyMap<string, FakeFileKind>): FakeFileKind {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const chosen = fileAs.get(type);
  if (chosen && method !== 'photo') return chosen;
  if (type === 'image/gif' && (method === 'document' || method === 'animation')) return 'animation';
  return method;
}

/** Telegram's limits, in UTF-16 code units after entities parsing (no parse_mode: nothing is parsed away). */
export const MAX_TEXT = 4_096;
export const MAX_CAPTION = 1_024;

const SIGNATURES = {
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  // "RIFF", a size, "WEBP"
  webp: Buffer.from('RIFF\0\0\0\0WEBP', 'latin1'),
  // an ISO media file of brand heic: what an iPhone takes
  heic: Buffer.from('\0\0\0\x18ftypheic', 'latin1'),
};

/** A PNG's signature and the start of its IHDR chunk, giving its width and height. */
function pngHead(width: number, height: number): Buffer {
  const head = Buffer.alloc(24);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head, 0);
  head.writeUInt32BE(13, 8);
  head.write('IHDR', 12, 'latin1');
  head.writeUInt32BE(width, 16);
  head.writeUInt32BE(height, 20);
  return head;
}

/**
 * `size` bytes that read as an image of `format` by its signature (a PNG: and its dimensions,
 * 800 × 600 unless given), the rest random: as Telegram reads a photo.
 */
export function imageBytes(format: 'png' | keyof typeof SIGNATURES, size: number, dimensions = { width: 800, height: 600 }): Buffer {
  const head = format === 'png' ? pngHead(dimensions.width, dimensions.height) : SIGNATURES[format];
  return Buffer.concat([head, randomBytes(Math.max(0, size - head.length))]);
}
