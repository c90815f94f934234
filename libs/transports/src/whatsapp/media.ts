import { prepareWAMessageMedia, proto, type AnyMediaMessageContent, type WAMediaUploadFunction } from '@whiskeysockets/baileys';
import type { MediaContent } from '../transport.js';
import type { WhatsAppLogger } from './socket.js';

const REF_PREFIX = 'wa1:';

type MediaKind = 'image' | 'video' | 'audio' | 'document';

/** How WhatsApp shows a content type: formats its apps play inline, everything else as a file. */
export function mediaKind(contentType: string): MediaKind {
  const type = contentType.toLowerCase().split(';')[0]!.trim();
  if (type === 'image/jpeg' || type === 'image/png' || type === 'image/webp') return 'image';
  if (type === 'video/mp4' || type === 'video/3gpp') return 'video';
  if (type.startsWith('audio/')) return 'audio';
  return 'document';
}

/** Encrypted and uploaded once; the prepared message is a reference any later send reuses. */
export async function prepareMedia(media: MediaContent, upload: WAMediaUploadFunction, logger: WhatsAppLogger, timeoutMs: number): Promise<string> {
  const kind = mediaKind(media.contentType);
  const content = {
    [kind]: media.bytes,
    mimetype: media.contentType,
    ...(kind === 'document' && { fileName: media.filename ?? 'file' }),
  } as AnyMediaMessageContent;
  const prepared = await prepareWAMessageMedia(content, { upload, logger, mediaUploadTimeoutMs: timeoutMs });
  return REF_PREFIX + Buffer.from(proto.Message.encode(prepared).finish()).toString('base64');
}

export function mediaMessage(ref: string, caption: string | undefined): proto.Message | null {
  if (!ref.startsWith(REF_PREFIX)) return null;
  let message: proto.Message;
  try {
    message = proto.Message.decode(Buffer.from(ref.slice(REF_PREFIX.length), 'base64'));
  } catch {
    return null;
  }
  const inner = message.imageMessage ?? message.videoMessage ?? message.audioMessage ?? message.documentMessage;
  if (!inner) return null;
  if (caption && !message.audioMessage) (inner as { caption?: string | null }).caption = caption;
  return message;
}
