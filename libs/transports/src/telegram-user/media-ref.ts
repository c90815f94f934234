import { Api, helpers } from 'telegram';
import type { MediaContent } from '../transport.js';

export function uploadedMedia(file: Api.TypeInputFile, media: MediaContent): Api.TypeInputMedia {
  if (/^image\/(jpeg|png|webp)$/.test(media.contentType)) return new Api.InputMediaUploadedPhoto({ file });
  const attributes: Api.TypeDocumentAttribute[] = media.filename ? [new Api.DocumentAttributeFilename({ fileName: media.filename })] : [];
  return new Api.InputMediaUploadedDocument({ file, mimeType: media.contentType, attributes });
}

/** An uploaded media's reference as text: `photo:` or `document:`, then id, access hash and file reference (base64url). */
export function mediaRefOf(answer: unknown): string | null {
  const object = answer instanceof Api.MessageMediaPhoto ? answer.photo : answer instanceof Api.MessageMediaDocument ? answer.document : null;
  if (!(object instanceof Api.Photo) && !(object instanceof Api.Document)) return null;
  const kind = object instanceof Api.Photo ? 'photo' : 'document';
  return `${kind}:${object.id.toString()}:${object.accessHash.toString()}:${Buffer.from(object.fileReference).toString('base64url')}`;
}

export function inputMediaOf(ref: string): Api.TypeInputMedia {
  const [kind, id, hash, fileRef] = ref.split(':');
  const fields = { id: helpers.returnBigInt(id ?? '0'), accessHash: helpers.returnBigInt(hash ?? '0'), fileReference: Buffer.from(fileRef ?? '', 'base64url') };
  return kind === 'photo' ? new Api.InputMediaPhoto({ id: new Api.InputPhoto(fields) }) : new Api.InputMediaDocument({ id: new Api.InputDocument(fields) });
}
